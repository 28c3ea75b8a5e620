export { CAPTURED_FORMATS, CONTENT_FORMATS, FORMAT_MEDIA_TYPES, isContentFormat, isTextFormat, TEXT_FORMATS, type CapturedFormat, type ContentFormat, type TextFormat } from './formats.ts';
export { contentHash } from './content-key.ts';
export { contentStoreConfig } from './content-config.ts';
export { ContentStore } from './content-store.ts';
export { storePageContent, type PageContent } from './page-content.ts';
export { ContentNotFoundError } from './errors.ts';
