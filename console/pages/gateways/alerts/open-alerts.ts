/** What the merge reads of an alert (src/client/alerts.ts `Alert`): declared here so that its test type-checks under tsconfig.test.json, which wants file extensions in imports the console does not write. */
interface AlertLike {
  alert_id: string;
  state: string;
  opened: number;
}

/**
 * The customer's open alerts as the live stream changes them. Alerts are not in the stream's
 * commit order, so each connection starts from the list (`GET /alerts?state=OPEN`) read after it
 * opened; the frames that arrive before that answer wait and are applied over it, so that an
 * alert that opened or resolved meanwhile is neither lost nor brought back.
 */
export class OpenAlerts<Alert extends AlertLike> {
  private open = new Map<string, Alert>();
  /** Frames of the current connection, oldest first, until its list arrives. */
  private waiting: Alert[] | undefined;
  private connection = 0;
  /** Whether a list arrived at all (before that, there is nothing to show). */
  loaded = false;

  /** A new connection opened; its list is to be read. Returns the number the list's answer names. */
  connected(): number {
    this.waiting = [];
    return ++this.connection;
  }

  /** An `event: alert` frame: an alert that opened or resolved. */
  frame(alert: Alert): void {
    if (this.waiting) this.waiting.push(alert);
    else this.apply(alert);
  }

  /** The list read for connection `connection` (a newer connection's list replaces it: ignored); undefined when it failed. */
  listed(connection: number, alerts: Alert[] | undefined): boolean {
    if (connection !== this.connection) return false;
    if (alerts) {
      this.open = new Map(alerts.map((alert) => [alert.alert_id, alert]));
      this.loaded = true;
    }
    for (const alert of this.waiting ?? []) this.apply(alert);
    this.waiting = undefined;
    return true;
  }

  /** The open alerts, the newest opened first. */
  current(): Alert[] {
    return [...this.open.values()].sort((a, b) => b.opened - a.opened || (a.alert_id < b.alert_id ? -1 : 1));
  }

  private apply(alert: Alert): void {
    if (alert.state === 'OPEN') this.open.set(alert.alert_id, alert);
    else this.open.delete(alert.alert_id);
  }
}
