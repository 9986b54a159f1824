/**
 * One HTTP(S) request to a listener on 127.0.0.1, with its own connection (no keep-alive),
 * answered as status, headers and body text. For tests of the API's methods, headers,
 * tokens and TLS.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface CallOptions {
  method?: string;
  /** Sent as given; `host` defaults to `127.0.0.1:<port>`. */
  headers?: Record<string, string>;
  /** HTTPS with this CA (and a client certificate when cert and key are given). */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
}

export function httpCall(port: number, path: string, o: CallOptions = {}): Promise<Answer> {
  const request = o.tls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'GET',
        headers: { host: `127.0.0.1:${port}`, ...o.headers },
        agent: false,
        ...(o.tls ? { ca: o.tls.ca, cert: o.tls.cert, key: o.tls.key, servername: 'localhost' } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
