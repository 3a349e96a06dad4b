import { z } from 'zod';

export interface CompatibilityProblem {
  field: string;
  problem: 'removed' | 'retyped';
  detail: string;
}

type JsonSchema = {
  type?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [k: string]: unknown;
};

function shape(schema: JsonSchema): string {
  // Compare what a consumer relies on: the type (and format/enum, when present).
  return JSON.stringify({
    type: schema.type,
    format: schema.format,
    enum: schema.enum,
    anyOf: schema.anyOf,
  });
}

/**
 * Whether `next` can replace `previous` without breaking consumers of `previous`:
 * every required field stays, with the same type; a new field may be added, and an
 * old consumer ignores it. Removing or retyping a required field, or turning an
 * optional field into a required one, is refused.
 */
export function checkCompatible(previous: z.ZodObject, next: z.ZodObject): CompatibilityProblem[] {
  const a = z.toJSONSchema(previous) as JsonSchema;
  const b = z.toJSONSchema(next) as JsonSchema;
  const problems: CompatibilityProblem[] = [];
  const requiredBefore = new Set(a.required ?? []);
  const requiredAfter = new Set(b.required ?? []);
  for (const [field, before] of Object.entries(a.properties ?? {})) {
    const after = b.properties?.[field];
    if (!after) {
      if (requiredBefore.has(field))
        problems.push({
          field,
          problem: 'removed',
          detail: `required field "${field}" was removed`,
        });
      continue;
    }
    if (shape(before) !== shape(after)) {
      problems.push({
        field,
        problem: 'retyped',
        detail: `"${field}" changed from ${shape(before)} to ${shape(after)}`,
      });
    }
    if (requiredBefore.has(field) && !requiredAfter.has(field)) {
      problems.push({
        field,
        problem: 'removed',
        detail: `required field "${field}" became optional`,
      });
    }
  }
  return problems;
}
