/** An asset could not be provided; the check runner reports it as a status 3 event with this message. */
export class AssetError extends Error {
  override name = 'AssetError';
}
