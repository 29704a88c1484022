/**
 * Provider health: a deployment (one model on one provider) that fails
 * `failures` times in a row within `windowMs` — connection errors, timeouts
 * and 5xx only; a 4xx is the request's fault, not the provider's — is cooled
 * down for `cooldownMs`: the failover loop skips it while another deployment
 * of the model is usable. When the cooldown ends it is half-open: exactly one
 * request probes it; success makes it healthy again, failure cools it again.
 *
 * The state lives in each instance, not in the database: each instance sees
 * its own network path to a provider, a shared state would need a database
 * round trip on every request, and the worst case of not sharing is one
 * failed attempt per instance per cooldown.
 */
import { UpstreamError } from '../errors.js';

/** What health is kept by: one model on one provider (the catalog's `ResolvedDeployment` is one). */
export interface TrackedDeployment {
  provider: { id: string };
}

export interface ProviderHealthConfig {
  /** Failures in a row (within the window) that cool a deployment down. */
  failures: number;
  /** Failures older than this are forgotten, ms. */
  windowMs: number;
  /** How long a cooled deployment is skipped before one probe may try it, ms. */
  cooldownMs: number;
}

export type DeploymentState = 'healthy' | 'cooling' | 'half-open';

export interface DeploymentHealth {
  model: string;
  provider: string;
  state: DeploymentState;
  /** Failures counted in the current window. */
  recentFailures: number;
  /** ISO time the cooldown ends (cooling only). */
  coolingUntil: string | null;
  /** Times this deployment was cooled down since start. */
  cooldowns: number;
  lastError: string | null;
}

interface Entry {
  model: string;
  provider: string;
  /** Times of the failures in a row, oldest first (at most `failures`). */
  failureTimes: number[];
  coolingUntil: number;
  /** A half-open probe is on its way. */
  probing: boolean;
  cooldowns: number;
  lastError: string | null;
}

/** Only what says the provider (not the request) is failing counts. */
export function countsAgainstProvider(error: unknown): boolean {
  return error instanceof UpstreamError && (error.timeout || error.status === 0 || error.status >= 500);
}

export class ProviderHealth {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly config: ProviderHealthConfig,
    private readonly now: () => number = Date.now,
  ) {}

  private entry(model: string, deployment: TrackedDeployment, create: true): Entry;
  private entry(model: string, deployment: TrackedDeployment, create: false): Entry | undefined;
  private entry(model: string, deployment: TrackedDeployment, create: boolean): Entry | undefined {
    const key = `${model}\u0000${deployment.provider.id}`;
    let entry = this.entries.get(key);
    if (!entry && create) {
      entry = { model, provider: deployment.provider.id, failureTimes: [], coolingUntil: 0, probing: false, cooldowns: 0, lastError: null };
      this.entries.set(key, entry);
    }
    return entry;
  }

  private stateOf(entry: Entry | undefined, now: number): DeploymentState {
    if (!entry || entry.coolingUntil === 0) return 'healthy';
    return now < entry.coolingUntil ? 'cooling' : 'half-open';
  }

  /** Whether a request may try the deployment now (a half-open one: only while no probe is out). */
  private usable(entry: Entry | undefined, now: number): boolean {
    const state = this.stateOf(entry, now);
    return state === 'healthy' || (state === 'half-open' && !entry!.probing);
  }

  /**
   * The deployments to try, in the given order: cooled ones (and half-open
   * ones whose probe is out) are left out while another remains; when none
   * is usable, all are tried — a cooldown never refuses a request by itself.
   */
  arrange<Deployment extends TrackedDeployment>(model: string, deployments: Deployment[]): Deployment[] {
    if (this.entries.size === 0) return deployments;
    const now = this.now();
    const usable = deployments.filter((deployment) => this.usable(this.entry(model, deployment, false), now));
    return usable.length > 0 ? usable : deployments;
  }

  /** Runs one attempt on a deployment and records what it says of the provider. */
  async track<T>(model: string, deployment: TrackedDeployment, attempt: () => Promise<T>): Promise<T> {
    const existing = this.entry(model, deployment, false);
    const probe = existing !== undefined && this.stateOf(existing, this.now()) === 'half-open' && !existing.probing;
    if (probe) existing.probing = true;
    try {
      const result = await attempt();
      if (existing) this.succeeded(existing);
      return result;
    } catch (error) {
      if (countsAgainstProvider(error)) this.failed(this.entry(model, deployment, true), error as UpstreamError);
      else if (probe) existing.probing = false;
      throw error;
    }
  }

  private succeeded(entry: Entry): void {
    entry.failureTimes = [];
    entry.coolingUntil = 0;
    entry.probing = false;
  }

  private failed(entry: Entry, error: UpstreamError): void {
    const now = this.now();
    entry.lastError = error.timeout ? 'timeout' : error.status === 0 ? 'connection' : `http_${error.status}`;
    const state = this.stateOf(entry, now);
    if (state === 'half-open') {
      // The probe failed: cool down again at once.
      this.coolDown(entry, now);
      return;
    }
    if (state === 'cooling') return;
    entry.failureTimes = entry.failureTimes.filter((time) => now - time < this.config.windowMs);
    entry.failureTimes.push(now);
    if (entry.failureTimes.length >= this.config.failures) this.coolDown(entry, now);
  }

  private coolDown(entry: Entry, now: number): void {
    entry.coolingUntil = now + this.config.cooldownMs;
    entry.probing = false;
    entry.failureTimes = [];
    entry.cooldowns++;
  }

  /**
   * Drops the state of deployments a catalog reload took away (the model, or
   * the model's deployment on that provider): they are no longer reported,
   * and a deployment added back later starts healthy.
   */
  forget(stillDeployed: (model: string, provider: string) => boolean): void {
    for (const [key, entry] of this.entries) {
      if (!stillDeployed(entry.model, entry.provider)) this.entries.delete(key);
    }
  }

  /** Every deployment that failed at least once since start, for /metrics, /readyz and the admin procedure. */
  snapshot(): DeploymentHealth[] {
    const now = this.now();
    return [...this.entries.values()].map((entry) => {
      const state = this.stateOf(entry, now);
      return {
        model: entry.model,
        provider: entry.provider,
        state,
        recentFailures: entry.failureTimes.filter((time) => now - time < this.config.windowMs).length,
        coolingUntil: state === 'cooling' ? new Date(entry.coolingUntil).toISOString() : null,
        cooldowns: entry.cooldowns,
        lastError: entry.lastError,
      };
    });
  }
}

/** What `/readyz` adds when a deployment is cooled down or half-open (nothing while all are healthy). */
export function readinessDetail(health: ProviderHealth): { providers?: { model: string; provider: string; state: DeploymentState; coolingUntil: string | null }[] } {
  const unhealthy = health.snapshot().filter((entry) => entry.state !== 'healthy');
  if (unhealthy.length === 0) return {};
  return { providers: unhealthy.map(({ model, provider, state, coolingUntil }) => ({ model, provider, state, coolingUntil })) };
}
