/** The fake Miles session server v2: the API the rest of the harness uses. */

export { parseSessionTrace, readSessionTrace, type SessionTrace } from '../../contracts/trace.ts';
export type {
  LeafRef,
  SampleStatus,
  SamplesReply,
  TreeMetadata,
  WireSample,
} from '../../contracts/wire-sample.ts';
export { createSessionClient, type SessionClient, SessionRequestError, type SessionView } from './client.ts';
export { defaultPostprocess } from './hooks/default-postprocess.ts';
export { dropRetries } from './hooks/drop-retries.ts';
export { defaultPickerPath } from './hooks/picker-paths.ts';
export type { SamplePicker, SamplePostprocessor } from './hooks/types.ts';
export type { SessionServerOptions } from './options.ts';
export { type SessionServerHandle, startSessionServer } from './server.ts';
export type { SessionMetadata } from './session-metadata.ts';
export { decodeSamples, encodeSamples } from './wire/codec.ts';
