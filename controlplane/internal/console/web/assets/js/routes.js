// The route table: a path pattern (":name" matches one segment) and the view module rendering
// it. The first match wins, so a fixed path goes before a pattern that would also match it.
// nav: the label of the header link to the view; public: shown without a session;
// needs: a permission the header link requires (the view itself still asks the API).
// Append one entry per line.
export const routes = [
  { path: '/console/login', view: () => import('./views/signin.js'), public: true },
  { path: '/console/checks', view: () => import('./views/checks.js'), nav: 'Checks', needs: 'UPTIME_CHECKS:READ' },
  { path: '/console/checks/new', view: () => import('./views/checkform.js') },
  { path: '/console/checks/:id', view: () => import('./views/checkdetail.js') },
  { path: '/console/checks/:id/edit', view: () => import('./views/checkform.js') },
  { path: '/console/incidents', view: () => import('./views/incidents.js'), nav: 'Incidents', needs: 'UPTIME_CHECKS:READ' },
  { path: '/console/heartbeats', view: () => import('./views/heartbeats.js'), nav: 'Heartbeats', needs: 'HEARTBEAT_CHECKS:READ' },
  { path: '/console/heartbeats/:id', view: () => import('./views/heartbeat.js') },
  { path: '/console/status-pages', view: () => import('./views/status-pages.js'), nav: 'Status pages', needs: 'STATUS_PAGES:READ' },
  { path: '/console/status-pages/:id', view: () => import('./views/status-page.js') },
  { path: '/console/status-pages/:id/incidents/:incidentId', view: () => import('./views/status-page-incident.js') },
  { path: '/console/alerting', view: () => import('./views/alerting.js'), nav: 'Alerting' },
  { path: '/console/alerting/integrations/:id', view: () => import('./views/integration.js') },
  { path: '/console/alerting/webhooks/:id', view: () => import('./views/webhook.js') },
  { path: '/console/settings', view: () => import('./views/settings.js'), nav: 'Settings' },
  { path: '/console/operators', view: () => import('./views/operators.js'), nav: 'Operators', needs: 'AGENTS:READ' },
];

// landing is where /console/ and a fresh sign-in go.
export const landing = '/console/checks';
