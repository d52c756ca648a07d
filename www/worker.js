// Module worker entry (new Worker('./worker.js', {type: 'module'})): load the analysis
// wasm, whose main() installs the message handler and posts "ready".
import init from './pkg/worker.js';
init();
