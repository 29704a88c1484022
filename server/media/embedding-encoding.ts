/**
 * The two wire forms of an embedding vector (`encoding_format` `float` or `base64`).
 *
 * `base64` is the raw little-endian IEEE-754 float32 bytes of the vector, 4 bytes per
 * component, no header (`[1, -2]` → `00 00 80 3f 00 00 00 c0` → `"AACAPwAAAMA="`). openai-node
 * asks for it whenever its caller names no format and decodes it with
 * `new Float32Array(Buffer.from(text, 'base64').buffer)` (src/internal/utils/base64.ts,
 * `toFloat32Array`), so a client sees float32 values either way. The `float` form therefore
 * carries the same float32-rounded numbers, so that both formats give identical vectors. Both
 * also write -0 as 0, because JSON has no negative zero (`JSON.stringify(-0)` is `"0"`).
 */

function assertFinite(value: number, index: number): void {
  // A finite double beyond float32 range would round to Infinity, which JSON cannot carry either.
  if (!Number.isFinite(Math.fround(value))) throw new RangeError(`embedding component ${index} is not a finite float32`);
}

/**
 * The vector as JSON numbers, each rounded to float32 (`Math.fround`), so that it equals what
 * an SDK decodes from {@link encodeEmbeddingBase64} of the same vector.
 * @throws RangeError when a component is NaN, infinite or beyond float32 range (JSON cannot carry it).
 */
export function toFloatArray(vector: ArrayLike<number>): number[] {
  const values = new Array<number>(vector.length);
  for (let index = 0; index < vector.length; index++) {
    const value = vector[index];
    assertFinite(value, index);
    values[index] = value === 0 ? 0 : Math.fround(value);
  }
  return values;
}

/**
 * The vector as base64 of little-endian float32 bytes (OpenAI `encoding_format: 'base64'`).
 * @throws RangeError when a component is NaN or infinite, as {@link toFloatArray} does.
 */
export function encodeEmbeddingBase64(vector: ArrayLike<number>): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let index = 0; index < vector.length; index++) {
    const value = vector[index];
    assertFinite(value, index);
    bytes.writeFloatLE(value === 0 ? 0 : value, index * 4);
  }
  return bytes.toString('base64');
}
