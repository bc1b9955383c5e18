/** Records every lifecycle event a `ProvisionController` emits, for the lifecycle-event tests. */
import type { ProvisionController } from '../../src/index.ts';
import type { ProvisionControllerEvents } from '../../src/lifecycle.ts';

const eventNames = [
  'leading',
  'stoppedLeading',
  'synced',
  'provisioned',
  'provisionFailed',
  'deleted',
  'deleteFailed',
] as const satisfies readonly (keyof ProvisionControllerEvents)[];

/** One emitted event with its name. */
export type RecordedEvent = {
  [K in keyof ProvisionControllerEvents]: { name: K; event: ProvisionControllerEvents[K] };
}[keyof ProvisionControllerEvents];

/** Every lifecycle event `controller` emits from now on, in order. */
export function recordLifecycle(controller: ProvisionController): RecordedEvent[] {
  const seen: RecordedEvent[] = [];
  for (const name of eventNames) {
    controller.on(name, (event: ProvisionControllerEvents[typeof name]) => {
      seen.push({ name, event } as RecordedEvent);
    });
  }
  return seen;
}
