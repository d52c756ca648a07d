// Reads a Blob for the analysis worker that started this one (see worker.rs, `ReaderChannel`)
// and hands the bytes over, transferred (no copy). Chromium finishes a Blob read on the thread
// that asked for it: an analysis worker reading ahead for itself got the bytes only between two
// parsed slices, so its reads barely overlapped the parsing. This worker does nothing else, so
// its reads run beside the parser.
//
// The messages are the serde enums of src/web/protocol.rs (`ToReader`, `FromReader`),
// externally tagged. Request: {Read: {id, blob, from, to, slice, ahead, gunzip}} (slices of up
// to `slice` bytes, the first ones smaller; `gunzip: chunk` to inflate the bytes with the
// browser's DecompressionStream, on this thread, and hand them over in batches of about `chunk`
// bytes, null not to). To the analysis worker: {Bytes: {id, bytes, read}} (`bytes`: an
// ArrayBuffer, or an array of them for a batch; `read`: the bytes of the blob read so far),
// then {End: {id}}, or {Error: {id, message}}; from it: {Ack: {id}} per message taken (at most
// `ahead` are handed over and not yet taken) or {Stop: {id}}. These go over this worker's own
// channel (postMessage), which both browsers hand over in the process: Firefox sends a
// MessagePort's messages through its IPC, where 320 MB in 16 MB buffers took 6.2-7.1 s against
// 32-41 ms (in Chromium 43-95 ms against 62-77 ms). A request that brings a `port` (a
// MessagePort) is answered on it instead, and takes its Ack and Stop there.
const running = new Map();
onmessage = ({ data }) => {
  if (data?.Read) read(data.Read);
  else control(data);
};

// An Ack or Stop for the request it names.
function control(data) {
  const told = data?.Ack ?? data?.Stop;
  if (told) running.get(told.id)?.(data.Stop ? 'stop' : 'ack');
}

async function read(request) {
  const { port, ahead, id } = request;
  const post = port ? (m, t) => port.postMessage(m, t) : (m, t) => postMessage(m, t);
  let sent = 0;
  let taken = 0;
  let stopped = false;
  let wake = null;
  running.set(id, (told) => {
    if (told === 'stop') stopped = true;
    else taken++;
    if (wake) wake();
  });
  if (port) port.onmessage = ({ data }) => control(data);
  // Hands `bytes` over once the analysis worker has room; false when it wants no more.
  const hand = async (bytes, read) => {
    while (sent - taken >= ahead && !stopped) await new Promise((ok) => { wake = ok; });
    if (stopped) return false;
    post({ Bytes: { id, bytes, read } }, Array.isArray(bytes) ? bytes : [bytes]);
    sent++;
    return true;
  };
  try {
    const done = request.gunzip ? await inflate(request, hand, () => stopped) : await slices(request, hand, () => stopped);
    if (done) post({ End: { id } });
  } catch (e) {
    if (!stopped) post({ Error: { id, message: String((e && e.message) || e) } });
  }
  if (port) port.close();
  running.delete(id);
}

// The blob's bytes `from..to`, a slice at a time: [bytes, bytes of the blob read so far].
// The first slices are smaller (1 MB, doubling up to `slice`) so that the parsing starts
// after a small read, not a whole slice (16 MB: 25-40 ms); reading is faster than parsing, so
// each slice is there before the one before it is parsed.
async function* slicesOf({ blob, from, to, slice }) {
  for (let at = from, size = Math.min(slice, 1 << 20); at < to; size = Math.min(slice, 2 * size)) {
    const end = Math.min(at + size, to);
    yield [await blob.slice(at, end).arrayBuffer(), end - from];
    at = end;
  }
}

// The blob's bytes `from..to` in slices; true when all were handed over.
async function slices(request, hand, stopped) {
  for await (const [bytes, read] of slicesOf(request)) {
    if (!(await hand(bytes, read))) return false;
  }
  return !stopped();
}

// The inflated bytes of the blob's `from..to`, in batches of about `gunzip` bytes; true when
// all were handed over. Throws where DecompressionStream stops: a truncated or damaged stream,
// or anything after the first gzip member.
async function inflate(request, hand, stopped) {
  const stream = new DecompressionStream('gzip');
  const writer = stream.writable.getWriter();
  let read = 0;
  // Compressed slices in, as the inflated side takes them (write() waits while it is full).
  const feeding = (async () => {
    for await (const [bytes, r] of slicesOf(request)) {
      if (stopped()) break;
      await writer.write(new Uint8Array(bytes));
      read = r;
    }
    await writer.close();
  })().catch((e) => writer.abort(e).catch(() => {}));
  const inflated = stream.readable.getReader();
  // DecompressionStream hands out small chunks (about 64 KB): they go over in batches,
  // transferred rather than copied into one buffer (copying took 0.35-0.45 s of this thread's
  // time for 500 MB).
  let batch = [];
  let fill = 0;
  const handBatch = async () => {
    const more = await hand(batch, read);
    batch = [];
    fill = 0;
    if (!more) inflated.cancel().catch(() => {});
    return more;
  };
  for (;;) {
    const { done, value } = await inflated.read();
    if (done) break;
    const whole = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength;
    batch.push(whole ? value.buffer : value.slice().buffer);
    fill += value.byteLength;
    if (fill >= request.gunzip && !(await handBatch())) return false;
  }
  await feeding;
  if (fill > 0 && !(await handBatch())) return false;
  return !stopped();
}
