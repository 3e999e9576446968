// @ts-check

/** A failed API call: the HTTP status and the API's `{message, code}` (or a readable stand-in). */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status, 0 when the backend could not be reached
   * @param {string} message
   * @param {number} [code] the API's numeric error code
   */
  constructor(status, message, code) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * The error of a non-2xx answer: the API's message when the body is its JSON error, else the status.
 * @param {Response} res
 * @returns {Promise<ApiError>}
 */
export async function errorOf(res) {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text);
    if (body && typeof body.message === 'string') return new ApiError(res.status, body.message, body.code);
  } catch {
    /* not the API's JSON error: said below */
  }
  return new ApiError(
    res.status,
    `${res.status} ${res.statusText || 'error'}${text ? `: ${text.slice(0, 200)}` : ''}`,
  );
}

/**
 * A message a person can read for anything thrown.
 * @param {unknown} err
 */
export function messageOf(err) {
  if (err instanceof ApiError) return err.status ? `${err.message} (HTTP ${err.status})` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
