import {
  API_ROUTES,
  journeySchema,
  outboxPageSchema,
  requeueResponseSchema,
  resetResponseSchema,
  settingsSchema,
  stateResponseSchema,
  failurePointStateSchema,
  type ArmRequest,
  type FailurePointName,
  type OrderMode,
  type RelayAcks,
  type RelayKind,
} from '@outbox/dashboard-api/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pathWith } from './client.ts';
import { keepsPageOf, type OutboxFilter } from './outbox-filter.ts';

export type { OutboxFilter };

const routes = API_ROUTES;

/** Settings, failure points and their state: refreshed every 2 s and after each control. */
export function useDashboardState() {
  return useQuery({
    queryKey: ['state'],
    queryFn: () => api(stateResponseSchema, 'GET', routes.state.path),
    refetchInterval: 2_000,
  });
}

function useControl<T, V>(fn: (vars: V) => Promise<T>, invalidate: string[][] = [['state']]) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSettled: () =>
      Promise.all(invalidate.map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}

export function useArm() {
  return useControl(({ name, request }: { name: FailurePointName; request: ArmRequest }) =>
    api(failurePointStateSchema, 'POST', pathWith(routes.armFailurePoint.path, { name }), request),
  );
}

export function useSetMode() {
  return useControl((mode: OrderMode) => api(settingsSchema, 'PUT', routes.mode.path, { mode }));
}

export function useSetRelay() {
  return useControl((relay: RelayKind) => api(settingsSchema, 'PUT', routes.relay.path, { relay }));
}

/** The relay's producer acks ('1' is the unsafe lesson). */
export function useSetAcks() {
  return useControl((acks: RelayAcks) => api(settingsSchema, 'PUT', routes.acks.path, { acks }));
}

export function useSetTraffic() {
  return useControl((rate: number) => api(settingsSchema, 'PUT', routes.traffic.path, { rate }));
}

export function useReset() {
  return useControl(
    () => api(resetResponseSchema, 'POST', routes.reset.path),
    [['state'], ['outbox'], ['journey']],
  );
}

export function useRequeue() {
  return useControl(
    (id: string) => api(requeueResponseSchema, 'POST', pathWith(routes.requeue.path, { id })),
    [['outbox'], ['journey']],
  );
}

/** One page of the outbox browser, newest first; the first page follows live. */
export function useOutboxPage(filter: OutboxFilter) {
  const params = new URLSearchParams({ limit: '15' });
  if (filter.status) params.set('status', filter.status);
  if (filter.aggregateId) params.set('aggregateId', filter.aggregateId);
  if (filter.cursor) params.set('cursor', filter.cursor);
  return useQuery({
    queryKey: ['outbox', filter],
    queryFn: () => api(outboxPageSchema, 'GET', `${routes.outbox.path}?${params.toString()}`),
    refetchInterval: filter.cursor ? false : 3_000,
    placeholderData: (previous, previousQuery) =>
      keepsPageOf(previousQuery?.queryKey[1] as OutboxFilter | undefined, filter)
        ? previous
        : undefined,
  });
}

export const isUuid = (s: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/** The journey of one order, followed until every step is done. */
export function useJourney(orderId: string | null) {
  return useQuery({
    queryKey: ['journey', orderId],
    enabled: orderId !== null && isUuid(orderId),
    queryFn: () => api(journeySchema, 'GET', pathWith(routes.journey.path, { id: orderId ?? '' })),
    refetchInterval: (query) => (query.state.data?.steps.every((s) => s.done) ? 10_000 : 1_500),
  });
}
