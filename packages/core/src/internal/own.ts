/**
 * Keys of wire JSON are data, never prototypes: `JSON.parse` makes `"__proto__"` an own key, but assigning it
 * (`target[key] = value`, `Object.assign`) calls the prototype setter, and reading a key the object lacks sees
 * `Object.prototype` (`constructor`, `__proto__`, `toString`). Every merge of server data goes through these two.
 */

/** Sets `key` as an own enumerable data property, `__proto__` included. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** The value of an own property of `record`; undefined for a missing or an inherited one. */
export function getOwn(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
