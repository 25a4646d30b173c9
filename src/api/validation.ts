/**
 * Request validation with TypeBox's compiler. Bodies are checked as sent (no type coercion: a
 * number where a string belongs is a 400); path and query strings are converted first.
 */
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

export interface ValidationIssue {
  instancePath: string;
  message: string;
}

export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const checker = TypeCompiler.Compile(schema);
  // A request without a body is an empty object where every member of the body is optional.
  const emptyBodyValid = httpPart === 'body' && checker.Check({});
  const integerKeys = httpPart === 'querystring' ? integerProperties(schema) : [];
  return (input: unknown) => {
    if (integerKeys.length > 0 && typeof input === 'object' && input !== null) {
      // Value.Convert would read `1e3`, `0x10`, ` 7` or `1.0` as numbers: integers in a query are plain digits.
      const issues = integerKeys
        .filter((key) => {
          const text = (input as Record<string, unknown>)[key];
          return typeof text === 'string' && !PLAIN_INTEGER.test(text);
        })
        .map((key) => ({ instancePath: `/${key}`, message: 'must be a whole number in plain decimal digits' }));
      if (issues.length > 0) return { error: issues as unknown as Error };
    }
    // Fastify hands a missing body over as null.
    if ((input === undefined || input === null) && emptyBodyValid) return { value: {} };
    const value = httpPart === 'body' ? input : Value.Convert(schema, input);
    if (checker.Check(value)) return { value };
    // One issue per field, the first TypeBox reports (the most specific).
    const seen = new Set<string>();
    const issues: ValidationIssue[] = [];
    for (const error of checker.Errors(value)) {
      if (seen.has(error.path)) continue;
      seen.add(error.path);
      issues.push({ instancePath: error.path, message: lowerFirst(error.message) });
      if (issues.length >= 20) break;
    }
    return { error: issues as unknown as Error };
  };
};

const PLAIN_INTEGER = /^-?[0-9]{1,16}$/;

/** Names of the object's members whose schema is an integer (alone or in a union). */
function integerProperties(schema: TSchema): string[] {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const isInteger = (s: TSchema): boolean => s.type === 'integer' || (Array.isArray(s.anyOf) && s.anyOf.some((t: TSchema) => isInteger(t)));
  return Object.entries(properties)
    .filter(([, s]) => isInteger(s))
    .map(([key]) => key);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
