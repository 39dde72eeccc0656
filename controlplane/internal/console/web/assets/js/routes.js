// The route table: a path pattern (":name" matches one segment) and the view module rendering
// it. The first match wins, so a fixed path goes before a pattern that would also match it.
// nav: the label of the header link to the view; public: shown without a session;
// needs: a permission the header link requires (the view itself still asks the API).
// Append one entry per line.
export const routes = [
  { path: '/console/signin', view: () => import('./views/signin.js'), public: true },
  { path: '/console/checks', view: () => import('./views/checks.js'), nav: 'Checks', needs: 'UPTIME_CHECKS:READ' },
  { path: '/console/checks/new', view: () => import('./views/checkform.js') },
  { path: '/console/checks/:id', view: () => import('./views/checkdetail.js') },
  { path: '/console/checks/:id/edit', view: () => import('./views/checkform.js') },
];

// landing is where /console/ and a fresh sign-in go.
export const landing = '/console/checks';
