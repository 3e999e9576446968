// @ts-check
// Templates are htm tagged literals bound to preact: no JSX, so the browser runs the files as written.
export { html } from 'htm/preact';
