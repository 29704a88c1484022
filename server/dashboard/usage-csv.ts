/** Usage rows as RFC 4180 CSV (CRLF, fields quoted when they hold a comma, quote or line break). */
const COLUMNS = ['id', 'created_at', 'endpoint', 'model', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cost', 'discount_percentage', 'status', 'stream', 'aborted'] as const;

interface UsageLine {
  id: string;
  created_at: number;
  endpoint: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cost: number;
  discount_percentage: number;
  status: number;
  stream: boolean;
  aborted: boolean;
}

function field(value: string | number | boolean): string {
  let text = String(value);
  // A leading =, +, - or @ would be a formula to a spreadsheet (CSV injection).
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toUsageCsv(rows: UsageLine[]): string {
  const lines = [COLUMNS.join(',')];
  for (const row of rows) {
    lines.push(COLUMNS.map((column) => (column === 'created_at' ? new Date(row.created_at * 1000).toISOString() : field(row[column]))).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
