/**
 * Generates the TypeScript types of the events from the Avro schemas, so the two cannot drift:
 * `npm run codegen -w @trawl/schemas` rewrites `src/generated/events.ts`, and a test fails when
 * the committed file differs from what the schemas give.
 */
import { EVENT_NAMES } from './names.ts';
import { eventSchema } from './load.ts';

type Node = string | Node[] | { [k: string]: unknown };

interface Field {
  name: string;
  type: Node;
  doc?: string;
  default?: unknown;
}

function shortName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

export function generateTypes(): string {
  const declarations = new Map<string, string>();

  const tsType = (node: Node): string => {
    if (typeof node === 'string') {
      switch (node) {
        case 'null':
          return 'null';
        case 'boolean':
          return 'boolean';
        case 'int':
        case 'long':
        case 'float':
        case 'double':
          return 'number';
        case 'string':
          return 'string';
        case 'bytes':
          return 'Buffer';
        default:
          return shortName(node);
      }
    }
    if (Array.isArray(node)) return node.map(tsType).join(' | ');
    const t = node as { type: Node; logicalType?: string; name?: string; symbols?: string[]; items?: Node; values?: Node; fields?: Field[]; doc?: string };
    if (t.logicalType === 'timestamp-millis') return 'Date';
    if (t.type === 'array') return `readonly ${wrap(tsType(t.items!))}[]`;
    if (t.type === 'map') return `Readonly<Record<string, ${tsType(t.values!)}>>`;
    if (t.type === 'enum') {
      const name = shortName(t.name!);
      declare(name, `${docComment(t.doc, '')}export type ${name} = ${t.symbols!.map((s) => `'${s}'`).join(' | ')};\n`);
      return name;
    }
    if (t.type === 'record') {
      const name = shortName(t.name!);
      const fields = t.fields!.map((f) => `${docComment(f.doc, '  ')}  readonly ${f.name}: ${tsType(f.type)};`);
      declare(name, `${docComment(t.doc, '')}export interface ${name} {\n${fields.join('\n')}\n}\n`);
      return name;
    }
    return tsType(t.type);
  };
  const wrap = (s: string): string => (s.includes('|') ? `(${s})` : s);
  const declare = (name: string, text: string): void => {
    if (!declarations.has(name)) declarations.set(name, text);
  };

  for (const name of EVENT_NAMES) tsType(eventSchema(name) as unknown as Node);

  const map = EVENT_NAMES.map((n) => `  ${n}: ${n};`).join('\n');
  return [
    '// Generated from schemas/avro by src/codegen.ts. Do not edit: run `npm run codegen -w @trawl/schemas`.\n',
    ...[...declarations.values()],
    '/** Every event type by name. */',
    `export interface EventMap {\n${map}\n}\n`,
  ].join('\n');
}

function docComment(doc: string | undefined, indent: string): string {
  return doc ? `${indent}/** ${doc} */\n` : '';
}
