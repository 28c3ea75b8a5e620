/**
 * Prints the API's OpenAPI document (JSON) on stdout, built offline (src/openapi-document.ts):
 * `npm run --silent openapi -w @trawl/api > openapi.json`. @trawl/client's generator reads it.
 */
import { openapiDocument } from '../src/openapi-document.ts';

process.stdout.write(`${JSON.stringify(await openapiDocument(), null, 2)}\n`);
