/** Plain-text tables and number formats for the bench's output. */

export function renderTable(headers: string[], rows: string[][], leftColumns = 1): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < leftColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export function num(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `value / base` as "1.23", or "–" without a base. */
export function ratio(value: number | undefined, base: number | undefined): string {
  if (value === undefined || base === undefined || !Number.isFinite(value) || !Number.isFinite(base) || base === 0) return '–';
  return (value / base).toFixed(2);
}

/** `value - base` as "+1.23" / "-0.40", or "–" without a base. */
export function delta(value: number | undefined, base: number | undefined, digits = 2): string {
  if (value === undefined || base === undefined || !Number.isFinite(value) || !Number.isFinite(base)) return '–';
  const difference = value - base;
  return `${difference >= 0 ? '+' : ''}${difference.toFixed(digits)}`;
}

export function mb(kb: number | undefined): number {
  return kb === undefined ? Number.NaN : kb / 1024;
}
