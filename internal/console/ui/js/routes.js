// The console's pages: hash routes and the navigation entries.

import { overviewPage } from './pages/overview.js';
import { clusterPage } from './pages/cluster.js';
import { streamsPage, streamPage } from './pages/streams.js';
import { topicPage } from './pages/topic.js';
import { messagesPage } from './pages/messages.js';
import { groupPage } from './pages/group.js';
import { clientsPage } from './pages/clients.js';
import { usersPage, userPage } from './pages/users.js';
import { tokensPage } from './pages/tokens.js';
import { serverPage } from './pages/server.js';
import { settingsPage } from './pages/settings.js';

const r = (path, title, page) => ({ parts: path.split('/').filter(Boolean), title, page });

/** Route table, matched in order against the hash path. */
export const routes = [
  r('/overview', 'Overview', overviewPage),
  r('/cluster', 'Cluster', clusterPage),
  r('/streams', 'Streams', streamsPage),
  r('/streams/:s', 'Stream', streamPage),
  r('/streams/:s/topics/:t', 'Topic', topicPage),
  r('/streams/:s/topics/:t/messages', 'Messages', messagesPage),
  r('/streams/:s/topics/:t/groups/:g', 'Consumer group', groupPage),
  r('/clients', 'Clients', clientsPage),
  r('/users', 'Users', usersPage),
  r('/users/:id', 'User', userPage),
  r('/tokens', 'Access tokens', tokensPage),
  r('/server', 'Server', serverPage),
  r('/settings', 'Settings', settingsPage),
];

/** Left navigation; visible(perms) hides entries the user cannot open. */
export const NAV = [
  { id: 'overview', href: '/overview', label: 'Overview' },
  { id: 'cluster', href: '/cluster', label: 'Cluster' },
  { id: 'streams', href: '/streams', label: 'Streams' },
  { id: 'clients', href: '/clients', label: 'Clients', visible: (p) => p.serverInfo() },
  { id: 'users', href: '/users', label: 'Users', visible: (p) => p.readUsers() },
  { id: 'tokens', href: '/tokens', label: 'Access tokens' },
  { id: 'server', href: '/server', label: 'Server' },
  { id: 'settings', href: '/settings', label: 'Settings' },
];
