/** Markdown tables of any columns, and the number format every table of the bench uses. */

/** Rounds to at most `digits` decimals without trailing zeros. */
export function formatNumber(value: number, digits = 2): string {
  return String(Number(value.toFixed(digits)));
}

/** A table with any columns. */
export interface GridTable {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** A Markdown table of any columns, preceded by its title in bold. */
export function renderGrid(table: GridTable): string {
  const cells = [table.header, ...table.rows];
  const widths = table.header.map((_, column) =>
    Math.max(...cells.map((line) => (line[column] ?? '').length)),
  );
  const pad = (line: readonly string[]): string =>
    `| ${line.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  const [header, ...body] = cells as [readonly string[], ...(readonly string[])[]];
  const rule = `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`;
  return [`**${table.title}**`, '', pad(header), rule, ...body.map(pad)].join('\n');
}
