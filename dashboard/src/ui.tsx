import { useState, type ReactNode } from 'react';
import { describeError } from './trpc';

/** Small shared pieces: error and status messages, a copy button, number formats. */

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const { message, code } = describeError(error);
  return (
    <p className="error" role="alert">
      {code ? <strong>{code}: </strong> : null}
      {message}
    </p>
  );
}

export function Status({ children }: { children: ReactNode }) {
  return (
    <p className="status" role="status">
      {children}
    </p>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        );
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

export function credits(value: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
}

export function when(value: string | number | null): string {
  if (value === null) return '—';
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  return date.toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

export function PageTitle({ children }: { children: ReactNode }) {
  return <h1 tabIndex={-1}>{children}</h1>;
}
