/** Columns apart by three spaces, as kubectl prints tables; the last column is not padded. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** One line of free text for a cell: newlines and runs of spaces become one space. */
export function cellText(value: string | null | undefined): string {
  if (value === null || value === undefined || value.trim() === '') return '-';
  return value.replace(/\s+/g, ' ').trim();
}
