// Module worker entry (new Worker('./worker.js', {type: 'module'})): load the analysis
// wasm, whose main() installs the message handler and posts "ready". A failed load is thrown
// from a task of its own, so that the page gets the worker's error event (a rejected promise
// in a module worker may reach the page as nothing at all) and can start it again.
import init from './pkg/worker.js';
init().catch((e) => setTimeout(() => { throw e; }));
