/**
 * Where the CLI writes: stdout for results, stderr for diagnostics, and whether colour is on
 * (a TTY and no NO_COLOR). Injected so commands can be tested without a terminal.
 */
export interface Output {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream & { isTTY?: boolean };
  color: boolean;
}

export function processOutput(env: NodeJS.ProcessEnv = process.env): Output {
  const color = process.stdout.isTTY && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  return { out: process.stdout, err: process.stderr, color };
}

const codes = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  dim: [2, 22],
  bold: [1, 22],
} as const;

export type Style = keyof typeof codes;

/** Wrap `text` in ANSI codes when colour is on. */
export function paint(output: Pick<Output, 'color'>, style: Style, text: string): string {
  if (!output.color) return text;
  const [open, close] = codes[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/** Write and wait for the stream to take it (backpressure when piped into a slow reader). */
export async function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (stream.write(text)) return;
  await new Promise<void>((resolve) => stream.once('drain', resolve));
}
