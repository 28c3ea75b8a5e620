/** `POST /jobs/{id}/reextract`: a finished job's stored pages parsed again under new extraction rules, as a new job. */
import { websiteBody } from './configuration.ts';
import { crawlAcceptedSchema } from './crawl.ts';
import { REEXTRACT_FORMATS } from '../crawl/reextract-spec.ts';

// Without their defaults: a rule left out stays the source job's, it is not reset to a website's default.
const { default: _root, ...itemRoot } = websiteBody.properties.item_root;
const { default: _rootXpath, ...itemRootXpath } = websiteBody.properties.item_root_xpath;
const { default: _fields, ...itemFields } = websiteBody.properties.item_fields;
const { default: _schema, ...itemSchema } = websiteBody.properties.item_schema;

export const reextractBody = {
  type: 'object',
  additionalProperties: false,
  required: ['spec'],
  properties: {
    spec: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      description: "the extraction rules that replace the job's (the rules left out stay the job's): a website's `item_root` or `item_root_xpath`, `item_fields` (CSS or XPath, with transforms) and `item_schema`, checked and bounded as a website's are; the content `formats` made again from the stored bodies (`metadata`: the pages' structured data); `only_main_content`. Giving one item root clears the job's other kind",
      properties: {
        item_root: itemRoot,
        item_root_xpath: itemRootXpath,
        item_fields: itemFields,
        item_schema: itemSchema,
        formats: { type: 'array', uniqueItems: true, maxItems: REEXTRACT_FORMATS.length, items: { type: 'string', enum: [...REEXTRACT_FORMATS] }, description: 'content formats kept of each page: `html`, `text`, `markdown`, `metadata` (title, OpenGraph, JSON-LD, microdata) (a browser\'s `screenshot` and `pdf` cannot be made from a stored body)' },
        only_main_content: { type: 'boolean', description: 'the text and Markdown formats hold the main content only' },
      },
    },
  },
} as const;

const { $id: _id, ...accepted } = crawlAcceptedSchema;

export const reextractResponse = {
  ...accepted,
  description: 'the re-extraction: a new job (or, `cached: true`, the same re-extraction asked within the dedupe TTL) that fetches nothing',
  required: [...accepted.required, 'reextract_of', 'pages', 'changes_url'],
  properties: {
    ...accepted.properties,
    reextract_of: { type: 'string', description: 'the job whose stored pages this one parses again' },
    pages: {
      type: 'object',
      required: ['fetched', 'stored', 'not_stored'],
      description: "the source job's fetched pages: `stored` are parsed again; `not_stored` (no body kept) fail `TRAWL_NOT_STORED` in the new job, counted with its failed pages and listed by `GET /jobs/{id}/pages?ok=false`",
      properties: { fetched: { type: 'integer' }, stored: { type: 'integer' }, not_stored: { type: 'integer' } },
    },
    changes_url: { type: 'string', description: "the items added, changed and removed against the source job (`GET`), once the new job has run, as a path on this API" },
  },
} as const;
