import { decodeSamples } from '../../fakes/session/index.ts';
import type { ExchangeRecord } from '../conformance/exchanges.ts';

/** What a played rollout's exchanges say, read the same way for the fake's answers and Miles'. */

/** The status of each chat turn, in turn order. */
export function turnStatuses(record: ExchangeRecord): number[] {
  return record.exchanges.filter((e) => e.step.startsWith('turn ')).map((e) => e.status);
}

function samplesOf(record: ExchangeRecord) {
  const answer = record.exchanges.find((e) => e.step === 'samples');
  if (answer === undefined || answer.status !== 200) return [];
  return decodeSamples(answer.body).samples;
}

/** The statuses of the samples the samples op returned (none when it answered non-200). */
export function sampleStatuses(record: ExchangeRecord): string[] {
  return samplesOf(record).map((s) => s.status);
}

/** The `tito_session_mismatch` types on the returned samples. */
export function mismatchTypes(record: ExchangeRecord): string[] {
  return samplesOf(record).flatMap((s) => {
    const list = s.metadata.tito_session_mismatch;
    return Array.isArray(list) ? list.map((m) => String((m as { type?: unknown }).type)) : [];
  });
}
