import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

// What may be spliced into SQL text: identifiers escaped by pg, constant SQL fragments
// of the same module, and numbers/table names from closed TypeScript unions. Anything
// else in a `${…}` inside SQL is a value and must be a $n parameter.
const ALLOWED = [
  /^pg\.escapeIdentifier\(/,
  /^pg\.escapeLiteral\(/,
  /^q\(/, // ops: pg.escapeIdentifier under a short name
  /^(claimColumns|claimable|where|list|table)$/, // core claim fragments; ops replay WHERE of $n, column list, union
  /^(INSERT_COLUMNS|select)$/, // core writer: its constant column list and its unnest SELECT of $n
  /^p\(\d\)$/, // core writer: the $n placeholder of the i-th events' array
  // core writer's appendWith: the caller's own statement text (its values are $n parameters,
  // passed separately); the caller's SQL, not a value.
  /^change\.text$/,
  /^values\.length \+ \d$/, // ops replay: the index of the next $n
  /^Math\.round\(/,
  /^reloptions\.join\(/, // ops: settings PostgreSQL itself printed, filtered by a strict pattern
  // core's named row states: a constant predicate per state, an optional literal alias.
  /^outboxState\('(pending|failing|deadLettered|blocking|sent|unsent)'(, '[a-z]+')?\)$/,
];
const SQL_START =
  /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|LOCK|SET|LISTEN|TRUNCATE)\b/i;

/** Every template literal that reads as SQL, with the expressions spliced into it. */
function sqlTemplates(text: string): { line: number; expressions: string[] }[] {
  const found: { line: number; expressions: string[] }[] = [];
  for (const match of text.matchAll(/`((?:[^`\\]|\\.)*)`/gs)) {
    const body = match[1]!;
    if (!SQL_START.test(body)) continue;
    const expressions = [...body.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1]!.trim());
    if (expressions.length === 0) continue;
    found.push({ line: text.slice(0, match.index).split('\n').length, expressions });
  }
  return found;
}

describe('all SQL is parameterised (static check of the services, core, the lab and ops)', () => {
  const dirs = [
    'services/order-api/src',
    'services/publisher-worker/src',
    'services/inventory-consumer/src',
    'packages/core/src',
    'packages/lab/src',
    'packages/ops/src',
  ];

  it('no value is spliced into SQL text', () => {
    const offenders: string[] = [];
    let templates = 0;
    for (const file of dirs.flatMap((d) => sources(join(root, d)))) {
      for (const t of sqlTemplates(readFileSync(file, 'utf8'))) {
        templates += 1;
        for (const e of t.expressions) {
          if (!ALLOWED.some((a) => a.test(e)))
            offenders.push(`${relative(root, file)}:${t.line}: \${${e}}`);
        }
      }
    }
    expect(templates).toBeGreaterThan(5); // the scan does find the SQL with fragments
    expect(offenders).toEqual([]);
  });

  it('the scanner flags a spliced value', () => {
    const bad = "pool.query(`SELECT * FROM orders WHERE id = '${req.params.id}'`)";
    expect(sqlTemplates(bad)).toEqual([{ line: 1, expressions: ['req.params.id'] }]);
  });
});
