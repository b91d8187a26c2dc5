/**
 * [MQTT-3.1.2-24]: a connection that sends no packet within one and a half times its keep alive is
 * closed (`expired`). One timer per connection, re-armed for the time left rather than reset on
 * every packet.
 */
export class KeepAlive {
  private lastActivity = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly expired: (limitMs: number) => void) {}

  watch(limitMs: number): void {
    this.lastActivity = performance.now();
    const check = () => {
      const idle = performance.now() - this.lastActivity;
      if (idle >= limitMs) return this.expired(limitMs);
      this.timer = setTimeout(check, limitMs - idle + 1);
    };
    this.timer = setTimeout(check, limitMs);
  }

  /** A packet arrived. */
  seen(): void {
    this.lastActivity = performance.now();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
