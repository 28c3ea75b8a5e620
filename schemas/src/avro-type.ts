/**
 * avsc leaves logical types to the application. Trawl maps `timestamp-millis` to `Date`; `uuid`
 * stays a plain string. Every encoder and decoder (here, in tests, in streams' registry client)
 * builds types with these options, so a Date written is a Date read.
 */
import avro, { type Schema, type Type } from 'avsc';

class TimestampMillis extends avro.types.LogicalType {
  override _fromValue(value: number): Date {
    return new Date(value);
  }
  override _toValue(value: unknown): number | undefined {
    if (value instanceof Date) return value.getTime();
    // Numbers pass through so JSON fixtures and older writers stay readable.
    return typeof value === 'number' ? value : undefined;
  }
  override _resolve(type: Type) {
    if (avro.Type.isType(type, 'long', 'logical:timestamp-millis')) return this._fromValue.bind(this) as (v: unknown) => unknown;
    return undefined;
  }
}

/** Never pass this object to avsc itself: avsc stores its name registry in the options it is given. */
export const avroTypeOptions: Readonly<Partial<avro.ForSchemaOptions>> = {
  logicalTypes: { 'timestamp-millis': TimestampMillis as unknown as new (schema: Schema, opts?: unknown) => avro.types.LogicalType },
};

export function avroType(schema: Schema): Type {
  return avro.Type.forSchema(schema, { ...avroTypeOptions });
}
