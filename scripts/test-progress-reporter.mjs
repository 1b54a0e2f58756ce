/**
 * A node:test reporter that writes, as they happen, the tests that start and end (one line each:
 * `start <nesting> <name>` / `end <nesting> <name>`), so scripts/test.ts can name the tests still
 * running when a file hangs: the TAP reporter prints a test only once it is over. Plain
 * JavaScript: node loads reporters before tsx's hooks.
 */
export default async function* progress(source) {
  for await (const event of source) {
    if (event.type === 'test:dequeue') yield `start ${event.data.nesting} ${event.data.name}\n`;
    else if (event.type === 'test:pass' || event.type === 'test:fail')
      yield `end ${event.data.nesting} ${event.data.name}\n`;
  }
}
