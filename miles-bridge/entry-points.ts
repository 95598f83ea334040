import { fileURLToPath } from 'node:url';

/**
 * The Python the harness runs against Miles' own code, in one room: every entry point a command starts,
 * as an absolute path. Product code names these constants and never spells a path into this folder, so
 * moving a file here is one edit, and `entry-points.test.ts` fails if one goes missing.
 */
function bridgeFile(name: string): string {
  return fileURLToPath(new URL(name, import.meta.url));
}

/** Miles' session server v2 under uvicorn on CPU (`harness conformance`, `--session-server miles`). */
export const SESSION_SERVER_LAUNCHER = bridgeFile('./session_server.py');
/** Miles' own rollout path on CPU (`harness differential`). */
export const ROLLOUT_DRIVER = bridgeFile('./rollout_driver.py');
/** Miles' reward post-processing and pass@k on given rows (`harness catalogue --miles-root`). */
export const REWARD_ROWS = bridgeFile('./reward_rows.py');
/** Miles' own dump writers (`save_debug_rollout_data`, the trajectory sidecar, train data) on CPU. */
export const DUMP_WRITER = bridgeFile('./dumps/write_dumps.py');
/** A `--dump-details` folder's `.pt` files as JSON (`harness smoke`). */
export const DUMP_CONVERTER = bridgeFile('./convert_dumps.py');
/** A Python launcher's argv and env as JSON (`harness recipe diff … python:`). */
export const LAUNCHER_READER = bridgeFile('./launcher_to_json.py');
/** Miles' argparse surface rebuilt as a parser (the rollout driver's args; the drift oracle). */
export const ARGPARSE_FROM_SURFACE = bridgeFile('./argparse_oracle.py');
/** The pure-Python byte-level BPE over Qwen3's tokenizer.json that Miles' tokenizer calls run on. */
export const HF_BPE_TOKENIZER = bridgeFile('./hf_bpe_tokenizer.py');
/** The toy tokenizer's Python copy (Miles runs on it in toy mode). */
export const TOY_TOKENIZER = bridgeFile('./toy_tokenizer.py');

/** Every entry point, for the existence test and `--help` texts. */
export const BRIDGE_ENTRY_POINTS = {
  SESSION_SERVER_LAUNCHER,
  ROLLOUT_DRIVER,
  REWARD_ROWS,
  DUMP_WRITER,
  DUMP_CONVERTER,
  LAUNCHER_READER,
  ARGPARSE_FROM_SURFACE,
  HF_BPE_TOKENIZER,
  TOY_TOKENIZER,
} as const;
