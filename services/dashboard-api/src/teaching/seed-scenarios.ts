import type { Scenario } from '../contract.ts';

/** The seed's four dual-write scenarios ("Четыре возможных сценария при сбое"), its own words beside ours. */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'happy_path',
    label: 'Happy path',
    db: 'OK',
    kafka: 'OK',
    consequence: 'Consistent',
    seedLabel: 'Happy path',
    seedConsequence: 'Консистентно',
  },
  {
    id: 'db_fail',
    label: 'DB fails',
    db: 'FAIL',
    kafka: '-',
    consequence: 'Fine, nothing happened',
    seedLabel: 'BD fail',
    seedConsequence: 'OK, ничего не произошло',
  },
  {
    id: 'network_after_commit',
    label: 'Network dies after commit',
    db: 'OK',
    kafka: 'FAIL',
    consequence: 'The order exists, the event does not: the warehouse never hears of it',
    seedLabel: 'Сеть умерла после commit',
    seedConsequence: 'Заказ есть, события нет, склад не узнает',
  },
  {
    id: 'network_after_publish',
    label: 'Network dies after publish',
    db: '???',
    kafka: 'OK',
    consequence:
      'The event was sent, the commit was not: an event about an order that does not exist',
    seedLabel: 'Сеть умерла после publish',
    seedConsequence:
      'Событие послано, а commit? Падение перед commit = есть событие о несуществующем заказе',
  },
];
