/**
 * A loopback OTLP/HTTP trace receiver, for export tests: `POST /v1/traces` in protobuf (decoded
 * with the OTLP protobuf definitions the OpenTelemetry packages generated — the last
 * `@opentelemetry/otlp-transformer` that ships them, aliased as `otlp-transformer-protos`; newer
 * ones only encode) or in JSON, answered 200. Every span received, flattened:
 *
 *   const rx = await startOtlpReceiver();
 *   ... export to `${rx.url}` (base) or `${rx.url}/v1/traces` ...
 *   expect(rx.spans.map((s) => s.name)).toContain('invoke_agent reloop');
 *   await rx.close();
 *
 * `status: 503` answers every request with that status instead (a collector that refuses).
 */

import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

const require = createRequire(import.meta.url);
const root = require('otlp-transformer-protos/build/src/generated/root.js');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export type Value = string | number | boolean | Value[] | { [k: string]: Value } | null;

export interface ReceivedEvent {
  name: string;
  timeUnixNano: string;
  attributes: Record<string, Value>;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP SpanKind: 1 internal, 3 client. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, Value>;
  events: ReceivedEvent[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  flags: number;
  resource: Record<string, Value>;
  scope: { name: string; version: string };
}

export interface ReceivedRequest {
  contentType: string;
  headers: IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the base endpoint (the exporter appends /v1/traces). */
  url: string;
  requests: ReceivedRequest[];
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(opts: { status?: number } = {}): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (opts.status) {
        res.writeHead(opts.status).end();
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type'] ?? '');
      try {
        const spans = contentType.includes('json')
          ? fromJson(JSON.parse(body.toString('utf8')))
          : fromProto(body);
        requests.push({ contentType, headers: req.headers, spans });
        res.writeHead(200, {
          'content-type': contentType.includes('json') ? 'application/json' : contentType,
        });
        res.end(contentType.includes('json') ? '{}' : undefined);
      } catch (e) {
        res.writeHead(400).end(String(e));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get spans() {
      return requests.flatMap((r) => r.spans);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf / JSON objects
type Any = any;

function fromProto(body: Buffer): ReceivedSpan[] {
  const msg = Request.toObject(Request.decode(body), { longs: String, bytes: String, oneofs: true });
  return flatten(msg, (b: string) => Buffer.from(b, 'base64').toString('hex'));
}

/** OTLP/JSON keeps ids as hex and 64-bit numbers as strings or numbers. */
export function spansOfJson(msg: Any): ReceivedSpan[] {
  return fromJson(msg);
}

function fromJson(msg: Any): ReceivedSpan[] {
  return flatten(msg, (id: string) => id);
}

function flatten(msg: Any, hex: (id: string) => string): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of msg.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const parent = s.parentSpanId ? hex(s.parentSpanId) : '';
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: parent === '' ? null : parent,
          name: s.name,
          kind: Number(s.kind ?? 0),
          startTimeUnixNano: String(s.startTimeUnixNano),
          endTimeUnixNano: String(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e: Any) => ({
            name: e.name,
            timeUnixNano: String(e.timeUnixNano),
            attributes: attributes(e.attributes),
          })),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          flags: Number(s.flags ?? 0),
          resource,
          scope: { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' },
        });
      }
    }
  }
  return out;
}

function attributes(list: Any[] | undefined): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

/** An AnyValue: protobufjs names the member set in `value` (oneofs); OTLP/JSON has only that key. */
function anyValue(v: Any): Value {
  if (v === null || v === undefined) return null;
  const key: string | undefined = v.value ?? Object.keys(v).find((k) => k.endsWith('Value'));
  switch (key) {
    case 'stringValue':
      return v.stringValue;
    case 'boolValue':
      return v.boolValue;
    case 'intValue':
      return Number(v.intValue);
    case 'doubleValue':
      return Number(v.doubleValue);
    case 'arrayValue':
      return (v.arrayValue.values ?? []).map(anyValue);
    case 'kvlistValue':
      return attributes(v.kvlistValue.values) as Value;
    case 'bytesValue':
      return v.bytesValue;
    default:
      return null;
  }
}
