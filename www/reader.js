// Reads slices of a Blob for the analysis worker that started this one (see worker.rs,
// `Slices`), and hands each over on the request's port, transferred (no copy). Chromium
// finishes a Blob read on the thread that asked for it: an analysis worker reading ahead for
// itself gets the bytes only between two parsed slices, so its reads barely overlapped the
// parsing. This worker does nothing else, so its reads run beside the parser.
//
// Request: {blob, from, to, slice, ahead, port}. On the port, to the analysis worker:
// {bytes: ArrayBuffer}, then {end: true}, or {error: text}; from it: {ack: true} per slice
// taken (at most `ahead` are handed over and not yet taken) or {stop: true}.
onmessage = async ({ data: { blob, from, to, slice, ahead, port } }) => {
  let sent = 0;
  let taken = 0;
  let stopped = false;
  let wake = null;
  port.onmessage = ({ data }) => {
    if (data.stop) stopped = true;
    else taken++;
    if (wake) wake();
  };
  try {
    for (let at = from; at < to && !stopped; ) {
      const end = Math.min(at + slice, to);
      const bytes = await blob.slice(at, end).arrayBuffer();
      at = end;
      while (sent - taken >= ahead && !stopped) await new Promise((ok) => { wake = ok; });
      if (stopped) break;
      port.postMessage({ bytes }, [bytes]);
      sent++;
    }
    if (!stopped) port.postMessage({ end: true });
  } catch (e) {
    if (!stopped) port.postMessage({ error: String((e && e.message) || e) });
  }
  port.close();
};
