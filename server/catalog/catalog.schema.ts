import { z } from 'zod';
import { creditsToMicro, type MicroPrice } from '../billing/money.js';
import { IMAGE_QUALITIES, IMAGE_SIZES, IMAGE_STYLES } from '../providers/openai/openai-images.wire.js';
import { ENDPOINTS } from '../endpoints.js';
import { PROVIDER_KIND_NAMES } from '../providers/types.js';
import { usageRulesSchema } from './usage-rules.schema.js';
import { isAzureV1Base } from '../providers/azure/azure-url.js';

export { ENDPOINTS, type Endpoint } from '../endpoints.js';

const credits = z.number().nonnegative().finite();

/** Prices in credits (1 credit = 1 USD of list price). Exactly these fields. */
export const pricingSchema = z.strictObject({
  /** Per million input tokens. */
  input: credits,
  /** Per million output tokens. */
  output: credits,
  /** Per million cached input tokens (defaults to `input`). */
  cachedInput: credits.optional(),
  /** Per image. */
  image: credits.optional(),
  /** Per second of audio or video. */
  second: credits.optional(),
  /** Per character of speech input. */
  character: credits.optional(),
  /** Flat, per request. */
  request: credits.optional(),
});
export type Pricing = z.infer<typeof pricingSchema>;

/** A model's prices in integer micro-credits, as billing counts them. */
export function toMicroPrice(pricing: Pricing): MicroPrice {
  return {
    inputPerMillion: creditsToMicro(pricing.input),
    outputPerMillion: creditsToMicro(pricing.output),
    cachedInputPerMillion: creditsToMicro(pricing.cachedInput ?? pricing.input),
    image: creditsToMicro(pricing.image ?? 0),
    second: creditsToMicro(pricing.second ?? 0),
    character: creditsToMicro(pricing.character ?? 0),
    request: creditsToMicro(pricing.request ?? 0),
  };
}

const secretReference = z
  .string()
  .regex(/^env:[A-Za-z_][A-Za-z0-9_]*$/, 'must reference an environment variable as "env:NAME"; secrets are not stored in the config');

/** Azure OpenAI: how the gateway addresses and authenticates to a resource. */
export const azureOptionsSchema = z.strictObject({
  /** The `api-version` query parameter (`2024-10-21`; `preview` on the v1 API). Required with deployment URLs. */
  apiVersion: z.string().regex(/^[A-Za-z0-9.-]{1,40}$/, 'an api-version such as 2024-10-21').optional(),
  /** A Microsoft Entra ID access token, sent as `Authorization: Bearer` instead of the `api-key` header. */
  entraToken: secretReference.optional(),
});

const identifier = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'letters, digits and . _ : / - only');

export const providerEntrySchema = z.strictObject({
  id: identifier,
  kind: z.enum(PROVIDER_KIND_NAMES),
  /**
   * Base URL including the version prefix (`https://api.openai.com/v1`). Not needed for `mock`; for `bedrock`, the region's endpoint unless set.
   * `azure`: the resource endpoint (`https://NAME.openai.azure.com`: deployment URLs, `azure.apiVersion`
   * required) or the v1 API base (`https://NAME.openai.azure.com/openai/v1`).
   */
  baseUrl: z.url().optional(),
  apiKey: secretReference.optional(),
  /** Extra headers; values may be `env:NAME` references too. */
  headers: z.record(z.string(), z.string()).optional(),
  /** Per-provider overrides of the upstream timeouts (ms) and retries. */
  connectTimeoutMs: z.number().int().positive().optional(),
  firstByteTimeoutMs: z.number().int().positive().optional(),
  idleTimeoutMs: z.number().int().positive().optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  /**
   * Narrows the `anthropic-beta` values a client's messages request carries to
   * this provider (betas can change what a request costs): those not listed
   * are dropped from the header; `["*"]` forwards any. Unset: every beta the
   * client sent is forwarded (SPEC: the beta header goes to the provider).
   */
  allowedBetas: z.array(z.string().regex(/^(\*|[A-Za-z0-9._-]+)$/)).optional(),
  /** Kind `azure` only (see {@link azureOptionsSchema}). */
  azure: azureOptionsSchema.optional(),
  /** `bedrock`: the region and the AWS credentials requests are signed with (Signature V4), as `env:NAME` references. */
  aws: z
    .strictObject({
      region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'an AWS region such as us-east-1'),
      accessKeyId: secretReference,
      secretAccessKey: secretReference,
      sessionToken: secretReference.optional(),
    })
    .optional(),
});
export type ProviderEntry = z.infer<typeof providerEntrySchema>;

export const deploymentSchema = z.strictObject({
  provider: identifier,
  upstreamModel: z.string().min(1).optional(),
  /** Lower is tried first. */
  priority: z.number().int().min(0).default(0),
  /** Share of traffic among deployments of the same priority. */
  weight: z.number().positive().default(1),
});
export type Deployment = z.infer<typeof deploymentSchema>;

/** Family names: what an operator types in `grants:grant --family`. */
const FAMILY_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

/** The family every existing catalog knew: restricted even when `families` does not declare it. */
export const LEGACY_RESTRICTED_FAMILY = 'restricted';

/**
 * One model family. `restricted: true` makes its models need an account access grant, and
 * their chat, messages and responses requests pass the usage check (`usageChecks`).
 */
export const familyEntrySchema = z.strictObject({
  restricted: z.boolean().default(false),
  description: z.string().max(500).optional(),
  usageChecks: z
    .strictObject({
      /** Whether requests of this family are checked at all (default: yes, when restricted). */
      enabled: z.boolean().default(true),
      /** Categories, thresholds, patterns and actions (usage-rules.schema.ts); default: DEFAULT_USAGE_RULES. */
      rules: usageRulesSchema.optional(),
    })
    .optional(),
});
export type FamilyEntry = z.infer<typeof familyEntrySchema>;

export const modelEntrySchema = z.strictObject({
  id: identifier,
  ownedBy: z.string().min(1),
  provider: identifier,
  upstreamModel: z.string().min(1),
  endpoints: z.array(z.enum(ENDPOINTS)).min(1),
  pricing: pricingSchema,
  /** More deployments to fall over to (the primary one has priority 0). */
  deployments: z.array(deploymentSchema).optional(),
  /**
   * The model's family, a name declared under `families` (or `restricted`, which is restricted
   * without being declared). A restricted family needs an access grant and runs usage checks.
   */
  family: z.string().regex(FAMILY_NAME, 'letters, digits and - _ only').optional(),
  /** Refuse requests whose parameters a bridge would drop (400 UNSUPPORTED_FEATURE). */
  strict: z.boolean().optional(),
  /** Embedding size; `dimensionsAdjustable` lets requests ask for fewer. */
  dimensions: z.number().int().positive().optional(),
  dimensionsAdjustable: z.boolean().optional(),
  /** Video generation (`/v1/videos`): the sizes and durations offered; requests outside them are refused with a 400. */
  videos: z
    .strictObject({
      /** `WIDTHxHEIGHT`; the first is the default unless `defaultSize` says otherwise. */
      sizes: z.array(z.string().regex(/^[1-9]\d*x[1-9]\d*$/, 'must be WIDTHxHEIGHT')).min(1),
      /** Durations in seconds: a list, or a range (bounds included). */
      seconds: z.union([z.array(z.number().positive()).min(1), z.strictObject({ min: z.number().positive(), max: z.number().positive() })]),
      defaultSize: z.string().optional(),
      defaultSeconds: z.number().positive().optional(),
    })
    .optional(),
  /** Embeddings: most tokens of one input (default {@link DEFAULT_EMBEDDING_MAX_INPUT_TOKENS}). */
  maxInputTokens: z.number().int().positive().optional(),
  /** What an image model accepts on generations and edits (defaults: {@link DEFAULT_IMAGE_CAPABILITIES}). */
  images: z
    .strictObject({
      /** Sizes accepted (of SPEC's list; `auto` included only when listed). */
      sizes: z.array(z.enum(IMAGE_SIZES)).min(1).optional(),
      /** `quality` values accepted; a model listing none refuses the field. */
      qualities: z.array(z.enum(IMAGE_QUALITIES)).optional(),
      /** `style` values accepted; a model listing none refuses the field. */
      styles: z.array(z.enum(IMAGE_STYLES)).optional(),
      /** Longest prompt, in characters. */
      maxPromptLength: z.number().int().min(1).max(32_000).optional(),
      /** Largest `n`. */
      maxImages: z.number().int().min(1).max(10).optional(),
      /** Most input images of one edit. */
      maxInputImages: z.number().int().min(1).max(16).optional(),
      /** Whether `stream: true` is served (partial images). */
      streaming: z.boolean().optional(),
    })
    .optional(),
});
export type ModelEntry = z.infer<typeof modelEntrySchema>;

export const catalogFileSchema = z
  .strictObject({
    providers: z.array(providerEntrySchema),
    models: z.array(modelEntrySchema),
    /** Model families by name (see {@link familyEntrySchema}). */
    families: z.record(z.string().regex(FAMILY_NAME, 'letters, digits and - _ only'), familyEntrySchema).optional(),
  })
  .superRefine((file, ctx) => {
    const providerIds = new Set<string>();
    file.providers.forEach((provider, index) => {
      if (providerIds.has(provider.id)) ctx.addIssue({ code: 'custom', path: ['providers', index, 'id'], message: `duplicate provider "${provider.id}"` });
      providerIds.add(provider.id);
      if (provider.kind !== 'mock' && provider.kind !== 'bedrock' && !provider.baseUrl) ctx.addIssue({ code: 'custom', path: ['providers', index, 'baseUrl'], message: 'required for this kind' });
      if (provider.azure && provider.kind !== 'azure') ctx.addIssue({ code: 'custom', path: ['providers', index, 'azure'], message: 'only for kind azure' });
      if (provider.kind === 'azure') {
        if (provider.baseUrl && !isAzureV1Base(provider.baseUrl) && !provider.azure?.apiVersion) {
          ctx.addIssue({ code: 'custom', path: ['providers', index, 'azure', 'apiVersion'], message: 'required with a resource endpoint (deployment URLs); or use the v1 API base …/openai/v1' });
        }
        if (provider.apiKey && provider.azure?.entraToken) {
          ctx.addIssue({ code: 'custom', path: ['providers', index, 'azure', 'entraToken'], message: 'give apiKey or entraToken, not both' });
        }
      }
      if (provider.kind === 'bedrock' && !provider.aws) ctx.addIssue({ code: 'custom', path: ['providers', index, 'aws'], message: 'required for kind bedrock (region and credentials)' });
    });
    const modelIds = new Set<string>();
    file.models.forEach((model, index) => {
      if (modelIds.has(model.id)) ctx.addIssue({ code: 'custom', path: ['models', index, 'id'], message: `duplicate model "${model.id}"` });
      modelIds.add(model.id);
      for (const provider of [model.provider, ...(model.deployments ?? []).map((deployment) => deployment.provider)]) {
        if (!providerIds.has(provider)) ctx.addIssue({ code: 'custom', path: ['models', index, 'provider'], message: `unknown provider "${provider}"` });
      }
      // A misspelt family would silently serve a model to everyone: every family but the legacy one is declared.
      if (model.family !== undefined && model.family !== LEGACY_RESTRICTED_FAMILY && !(model.family in (file.families ?? {}))) {
        ctx.addIssue({ code: 'custom', path: ['models', index, 'family'], message: `unknown family "${model.family}" (declare it under "families")` });
      }
    });
  });
export type CatalogFile = z.infer<typeof catalogFileSchema>;

/** Most tokens of one embedding input when the model does not say (OpenAI's embedding models: 8192). */
export const DEFAULT_EMBEDDING_MAX_INPUT_TOKENS = 8192;

/** An image model's capabilities with every default filled in. */
export type ImageCapabilities = Required<NonNullable<ModelEntry['images']>>;

/**
 * What an image model accepts when its catalog entry has no `images`: every
 * SPEC size, quality `standard`/`hd`, no `style`, 32,000-character prompts,
 * n up to 10, up to 16 input images, no streaming.
 */
export const DEFAULT_IMAGE_CAPABILITIES: ImageCapabilities = {
  sizes: [...IMAGE_SIZES],
  qualities: ['standard', 'hd'],
  styles: [],
  maxPromptLength: 32_000,
  maxImages: 10,
  maxInputImages: 16,
  streaming: false,
};

/** The capabilities of a model entry, defaults filled in field by field. */
export function imageCapabilitiesOf(entry: ModelEntry): ImageCapabilities {
  const declared = Object.fromEntries(Object.entries(entry.images ?? {}).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_IMAGE_CAPABILITIES, ...declared };
}
