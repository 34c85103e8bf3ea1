// A pool's children run the same server, so a change to its lists is usually announced by each of them.
// The server's cached lists need dropping once, not N times: a list_changed is passed on only when the list
// was read since the last one passed on. That is the one rule that never hides a change: until somebody
// reads the list again, the cache holds nothing from after the first announcement, so a second drop would
// drop nothing new; once it is read (maybe from a child that had not changed yet), the next announcement
// is passed on and drops that read.

const PREFIX = 'notifications/';
const SUFFIX = '/list_changed';

export class ListChangeDedupe {
  /** Lists announced as changed and not read since ('tools', 'prompts', 'resources'). */
  private readonly announced = new Set<string>();

  /** Whether a child's notification should reach the pool's listeners. */
  shouldPass(method: string): boolean {
    // resources/updated: one child holds subscriptions
    if (!method.startsWith(PREFIX) || !method.endsWith(SUFFIX)) return true;
    const list = method.slice(PREFIX.length, -SUFFIX.length);
    if (this.announced.has(list)) return false;
    this.announced.add(list);
    return true;
  }

  /** A request is going to a child: a list read (tools/list, resources/templates/list, …) re-arms its announcements. */
  sending(method: string): void {
    if (this.announced.size === 0 || !method.endsWith('/list')) return;
    this.announced.delete(method.slice(0, method.indexOf('/')));
  }
}
