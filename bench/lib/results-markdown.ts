/**
 * Reading the Markdown the suites write to bench/results/: its sections, the "Measured ..." line
 * of each and its tables as rows of cells, so that the docs' figures can be taken from the
 * committed results rather than copied by hand.
 */

export interface ResultTable {
  /** The headings the table sits under, outermost first. */
  headings: string[];
  header: string[];
  rows: string[][];
}

export interface ResultSection {
  /** The heading's text, without the #s. */
  heading: string;
  /** The section's lines up to the next heading of the same or a higher level. */
  text: string;
}

const cellsOf = (line: string): string[] =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim());

/** Every table of `text`, with the headings it sits under. */
export function resultTables(text: string): ResultTable[] {
  const lines = text.split('\n');
  const tables: ResultTable[] = [];
  const headings: { level: number; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const heading = /^(#+)\s+(.*)$/.exec(line);
    if (heading !== null) {
      const level = heading[1]?.length ?? 1;
      while ((headings.at(-1)?.level ?? 0) >= level) headings.pop();
      headings.push({ level, text: heading[2] ?? '' });
      continue;
    }
    const next = lines[i + 1] ?? '';
    if (!line.trim().startsWith('|') || !/^\s*\|[\s|:-]+\|\s*$/.test(next)) continue;
    const rows: string[][] = [];
    let j = i + 2;
    for (; j < lines.length && (lines[j] ?? '').trim().startsWith('|'); j++)
      rows.push(cellsOf(lines[j] ?? ''));
    tables.push({ headings: headings.map((h) => h.text), header: cellsOf(line), rows });
    i = j - 1;
  }
  return tables;
}

/** The sections of `text` at `level` (2 for `## ...`). */
export function resultSections(text: string, level: number): ResultSection[] {
  const out: ResultSection[] = [];
  const marker = `${'#'.repeat(level)} `;
  let current: ResultSection | undefined;
  for (const line of text.split('\n')) {
    const heading = /^(#+)\s/.exec(line);
    if (heading !== null && (heading[1]?.length ?? 0) <= level) {
      if (current !== undefined) out.push(current);
      current = line.startsWith(marker) ? { heading: line.slice(marker.length).trim(), text: '' } : undefined;
      continue;
    }
    if (current !== undefined) current.text += `${line}\n`;
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** The first table whose header has a cell starting with `column`, in `text`; throws if none. */
export function tableWith(text: string, column: string, where: string): ResultTable {
  const found = resultTables(text).find((t) => t.header.some((h) => h.startsWith(column)));
  if (found === undefined) throw new Error(`${where}: no table with a column "${column}"`);
  return found;
}

/** The cell of the row whose first cell is `row` (backticks ignored), in the column starting with `column`. */
export function cellOf(table: ResultTable, row: string, column: string): string | undefined {
  const index = table.header.findIndex((h) => h.startsWith(column));
  const found = table.rows.find((r) => (r[0] ?? '').replaceAll('`', '') === row);
  return index < 0 || found === undefined ? undefined : found[index];
}

/** The "Measured <date>, Node ..., load average ..." line of `text`, without "Measured ". */
export function measuredLine(text: string): string {
  const line = text.split('\n').find((l) => l.startsWith('Measured '));
  return line === undefined ? 'no date recorded' : line.slice('Measured '.length).replace(/\.$/, '');
}

/** `1.52x (1.52–1.71)` → its median, 1.52; NaN when the cell holds no figure. */
export function medianOf(cell: string | undefined): number {
  const m = /^(-?[\d.]+)/.exec((cell ?? '').replaceAll(',', ''));
  return m === null ? Number.NaN : Number(m[1]);
}

/** `1.52x (1.52–1.71)` → its range, [1.52, 1.71]; the median twice when no range is given. */
export function rangeOf(cell: string | undefined): [number, number] {
  const m = /\((-?[\d.]+)[–-](-?[\d.]+)/.exec((cell ?? '').replaceAll(',', ''));
  const median = medianOf(cell);
  return m === null ? [median, median] : [Number(m[1]), Number(m[2])];
}
