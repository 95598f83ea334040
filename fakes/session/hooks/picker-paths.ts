import { HarnessError } from '../../../common/errors.ts';
import type { MilesSwitches } from '../../../contracts/miles-profile.ts';
import { dropRetries } from './drop-retries.ts';
import { dropRolledBackLeaves, dropSamePromptRetries } from './drop-rolled-back-leaves.ts';
import type { SamplePicker } from './types.ts';

/**
 * The pickers Miles ships, by the import path `--session-sample-picker-path` names them with
 * (radixark/miles@31f1ca96 miles/rollout/session/v2/picker_hub/drop_retries.py; sii-avalanche/miles@4d412b5a
 * miles/rollout/session/v2/picker_hub/__init__.py: drop_rolled_back_leaves, drop_same_prompt_retries). The
 * fake offers all three under every profile (4d412b5a itself no longer ships drop_retries).
 */
const PICKER_HUB = 'miles.rollout.session.v2.picker_hub';

export const PICKERS_BY_PATH: ReadonlyMap<string, SamplePicker> = new Map([
  [`${PICKER_HUB}.drop_retries`, dropRetries],
  [`${PICKER_HUB}.drop_rolled_back_leaves`, dropRolledBackLeaves],
  [`${PICKER_HUB}.drop_same_prompt_retries`, dropSamePromptRetries],
]);

/** The import path of the profile's default picker (what Miles prints in a hook-failure text). */
export function defaultPickerPath(switches: MilesSwitches): string {
  return `${PICKER_HUB}.${switches.defaultPicker}`;
}

/** The picker at `path`; an unknown path is a `config.session_picker_path` error naming the known ones. */
export function pickerAtPath(path: string): SamplePicker {
  const picker = PICKERS_BY_PATH.get(path);
  if (picker === undefined)
    throw new HarnessError(
      'config.session_picker_path',
      `session sample picker path ${JSON.stringify(path)} is not one the fake ships; known: ${[...PICKERS_BY_PATH.keys()].join(', ')}`,
      { details: { field: 'pickerPath' } },
    );
  return picker;
}
