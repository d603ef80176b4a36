// Permission checks mirroring the server's rules (../shared/design/semantics.md
// §2.4), used only to hide or disable what the signed-in user may not do. The
// server stays the authority: a 403 it answers is shown as an error.

/** The global permission flags, in API order. */
export const GLOBAL_FLAGS = ['manage_servers', 'read_servers', 'manage_users', 'read_users', 'manage_streams',
  'read_streams', 'manage_topics', 'read_topics', 'poll_messages', 'send_messages'];
/** The per-stream flags. */
export const STREAM_FLAGS = ['manage_stream', 'read_stream', 'manage_topics', 'read_topics', 'poll_messages', 'send_messages'];
/** The per-topic flags. */
export const TOPIC_FLAGS = ['manage_topic', 'read_topic', 'poll_messages', 'send_messages'];

/** Wraps a Permissions object (or null) with the rule checks. */
export class Perms {
  constructor(p) {
    this.p = p || null;
  }
  g(flag) {
    return !!(this.p && this.p.global && this.p.global[flag]);
  }
  s(stream, flag) {
    const st = this.p && this.p.streams && this.p.streams[String(stream)];
    return !!(st && st[flag]);
  }
  t(stream, topic, flag) {
    const st = this.p && this.p.streams && this.p.streams[String(stream)];
    const tp = st && st.topics && st.topics[String(topic)];
    return !!(tp && tp[flag]);
  }
  serverInfo() { return this.g('manage_servers') || this.g('read_servers'); }
  readUsers() { return this.g('manage_users') || this.g('read_users'); }
  manageUsers() { return this.g('manage_users'); }
  listStreams() { return this.g('manage_streams') || this.g('read_streams'); }
  createStream() { return this.g('manage_streams'); }
  /** True when the user has any per-stream entry (may see some streams without listing). */
  hasStreamEntries() { return !!(this.p && this.p.streams && Object.keys(this.p.streams).length); }
  getStream(s) {
    return this.g('manage_streams') || this.g('read_streams') || this.s(s, 'manage_stream') || this.s(s, 'read_stream');
  }
  manageStream(s) { return this.g('manage_streams') || this.s(s, 'manage_stream'); }
  getTopics(s) {
    return ['read_streams', 'manage_streams', 'manage_topics', 'read_topics'].some((f) => this.g(f)) ||
      ['manage_stream', 'read_stream', 'manage_topics', 'read_topics'].some((f) => this.s(s, f));
  }
  getTopic(s, t) { return this.getTopics(s) || this.t(s, t, 'manage_topic') || this.t(s, t, 'read_topic'); }
  createTopic(s) {
    return this.g('manage_streams') || this.g('manage_topics') || this.s(s, 'manage_stream') || this.s(s, 'manage_topics');
  }
  manageTopic(s, t) { return this.createTopic(s) || this.t(s, t, 'manage_topic'); }
  groups(s, t) { return this.getTopic(s, t); }
  poll(s, t) {
    return ['poll_messages', 'read_topics', 'manage_topics', 'read_streams', 'manage_streams'].some((f) => this.g(f)) ||
      ['poll_messages', 'manage_stream', 'read_stream', 'manage_topics', 'read_topics'].some((f) => this.s(s, f)) ||
      ['manage_topic', 'read_topic', 'poll_messages'].some((f) => this.t(s, t, f));
  }
  offsets(s, t) { return this.poll(s, t); }
  send(s, t) {
    return ['send_messages', 'manage_streams', 'manage_topics'].some((f) => this.g(f)) ||
      ['send_messages', 'manage_stream', 'manage_topics'].some((f) => this.s(s, f)) ||
      ['manage_topic', 'send_messages'].some((f) => this.t(s, t, f));
  }
}

/** An all-false permission set in API shape. */
export function emptyPermissions() {
  const global = {};
  for (const f of GLOBAL_FLAGS) global[f] = false;
  return { global, streams: null };
}
