/**
 * One contender of the scopes bench and its server, alone in this process (`npm run bench --
 * --only scopes --apart` starts one of these at a time): `scopes-child.ts <shape id> <index>`.
 * Prints the result as JSON on a line starting with `RESULT_MARK`, then exits (the peers'
 * libraries may leave timers behind).
 */
import { RESULT_MARK, runByIndex } from './scopes.js';

const [id, index] = process.argv.slice(2);
const result = await runByIndex(id ?? '', Number(index));
process.stdout.write(`${RESULT_MARK}${JSON.stringify(result)}\n`, () => process.exit(0));
