// @ts-check
import { render } from 'preact';
import { html } from './html.js';
import { session } from './api/session.js';
import { match, route, navigate, DEFAULT_PATH } from './router.js';
import { ROUTES } from './routes.js';
import { Layout } from './components/layout.js';
import { Confirmations } from './components/dialog.js';
import { Notices } from './components/notices.js';
import { SignIn } from './pages/signin.js';

function NotFound() {
  return html`<section>
    <h1>No such page</h1>
    <p><a href=${`#${DEFAULT_PATH}`}>Go to the events</a></p>
  </section>`;
}

function Page() {
  const { path } = route.value;
  for (const [pattern, Component] of ROUTES) {
    const params = match(pattern, path);
    if (params) return html`<${Component} key=${pattern} params=${params} />`;
  }
  return html`<${NotFound} />`;
}

/** Signed out: the sign-in page, whatever the URL (kept, so signing in lands where the link pointed). */
function App() {
  if (!session.value) return html`<${SignIn} /><${Notices} />`;
  return html`<${Layout}><${Page} /><//><${Confirmations} /><${Notices} />`;
}

if (!location.hash) navigate(DEFAULT_PATH, undefined, { replace: true });
const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
