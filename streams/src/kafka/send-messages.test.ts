import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { kafkajsSendMessages } from './kafkajs.ts';

describe('kafkajs’s producer send', () => {
  it('is the restated one, which retries by partition (a leader change loses nothing: chaos/brokers3.test.ts proves it)', () => {
    expect(kafkajsSendMessages).toEqual({ active: true });
    const require = createRequire(import.meta.url);
    const send = require('kafkajs/src/producer/sendMessages.js') as Record<symbol, unknown>;
    expect(send[Symbol.for('trawl.kafkajs-send-messages')]).toBe(true);
  });
});
