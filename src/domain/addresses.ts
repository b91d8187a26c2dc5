/** Addresses of this machine only: `localhost`, 127.0.0.0/8 (also written IPv4-mapped, `::ffff:127.0.0.1`) and `::1`. */
export function isLoopback(host: string): boolean {
  const plain = host.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  return plain === 'localhost' || plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}
