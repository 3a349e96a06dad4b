import { MAX_TRAFFIC_RATE } from '@outbox/dashboard-api/contract';
import { useState } from 'react';
import { useDashboardState } from './api/queries.ts';
import { useLiveStats } from './api/use-live-stats.ts';
import { CdcComparison } from './components/CdcComparison.tsx';
import { CdcPanel } from './components/CdcPanel.tsx';
import { ConsumerGroupPanel } from './components/ConsumerGroupPanel.tsx';
import { Controls } from './components/Controls.tsx';
import { EventFeed } from './components/EventFeed.tsx';
import { FailurePanel } from './components/FailurePanel.tsx';
import { KafkaPanel } from './components/KafkaPanel.tsx';
import { InvariantTiles } from './components/InvariantTiles.tsx';
import { LessonBanner } from './components/LessonBanner.tsx';
import { LiveCharts } from './components/LiveCharts.tsx';
import { OrderJourney } from './components/OrderJourney.tsx';
import { OutboxBrowser } from './components/OutboxBrowser.tsx';
import { Panel } from './components/Panel.tsx';
import { ProcessList } from './components/ProcessList.tsx';
import { ScenarioTable } from './components/ScenarioTable.tsx';
import { highlightedRow } from './live/highlight.ts';
import { acksOf, brokerCount } from './live/kafka.ts';
import { formatRate } from './format.ts';

export function App() {
  const live = useLiveStats();
  const state = useDashboardState();
  const [orderId, setOrderId] = useState<string | null>(null);
  const stats = live.stats;
  const outageActive =
    state.data?.failurePoints.some((p) => p.name === 'worker.kafka_outage' && p.active) ?? false;
  const highlight = highlightedRow(stats, live.hits, outageActive);
  const settings = stats?.settings ?? state.data?.settings;
  const acks = acksOf(settings);
  const brokers = brokerCount(stats?.kafka);
  const kafkaPanel = (
    <Panel
      id="kafka"
      title="Kafka: the broker’s half of the guarantee"
      subtitle={`Who leads each partition of orders.events and which replicas are in sync, read from the brokers' metadata. The relay marks rows sent once the broker acknowledges them: what an acknowledgement is worth depends on acks.`}
    >
      <KafkaPanel
        kafka={stats?.kafka}
        moves={live.leaderMoves}
        acks={acks}
        states={state.data?.failurePoints}
        mode={settings?.mode}
        relay={settings?.relay.active}
        chaosEnabled={state.data?.chaosEnabled ?? stats?.chaosEnabled ?? true}
      />
    </Panel>
  );
  const showOrder = (id: string) => {
    setOrderId(id);
    document.getElementById('journey')?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  };
  return (
    <>
      <a className="skip" href="#failures">
        Skip to the failure buttons
      </a>
      <header className="top">
        <div className="brand">
          <h1>Outbox Lab</h1>
          <p>
            Why a dual write loses events, and how the Transactional Outbox and the Inbox fix it, on
            a real PostgreSQL and a real Kafka.
          </p>
        </div>
        <div className="top-status">
          {stats ? (
            <a
              href="#kafka"
              className={`brokers-pill ${brokers === 3 ? 'brokers-cluster' : ''}`}
              data-testid="brokers"
              data-brokers={brokers}
              title={
                brokers === 3
                  ? 'A 3-broker Kafka cluster: replication factor 3, min.insync.replicas 2'
                  : 'One Kafka broker (npm run demo -- --brokers 3 for a cluster)'
              }
            >
              Kafka: {brokers === 1 ? '1 broker' : `${brokers} brokers`}
              {acks === '1' ? <span className="unsafe-tag">acks = 1 UNSAFE</span> : null}
            </a>
          ) : null}
          <div
            className={`conn ${live.connected ? 'conn-live' : 'conn-down'}`}
            data-testid="connection"
            role="status"
          >
            <span className="dot" aria-hidden="true" />
            {live.connected ? 'live' : 'connecting…'}
            {stats ? (
              <span className="conn-meta">
                {stats.totals.orders.toLocaleString('en-US')} orders · tick{' '}
                {formatRate(stats.tickMs)} ms
              </span>
            ) : null}
          </div>
        </div>
      </header>
      <main>
        {live.problem || state.error ? (
          <p className="error banner" role="alert">
            {live.problem ?? state.error?.message}
          </p>
        ) : null}
        <Controls
          mode={stats?.settings.mode ?? state.data?.settings.mode}
          relay={stats?.settings.relay ?? state.data?.settings.relay}
          rate={stats?.settings.trafficRate ?? state.data?.settings.trafficRate}
          maxRate={state.data?.maxTrafficRate ?? MAX_TRAFFIC_RATE}
          needsToken={state.data?.controlRequiresToken ?? false}
          onReset={() => {
            live.clearFeed();
            setOrderId(null);
          }}
        />
        <LessonBanner highlight={highlight} />
        <Panel
          id="invariants"
          title="Invariants"
          subtitle="Computed from PostgreSQL twice a second. Red: an invariant is broken."
        >
          <InvariantTiles invariants={stats?.invariants} />
        </Panel>
        <div className="grid">
          <div className="col-main">
            <Panel
              id="charts"
              title="The outbox, live"
              subtitle="Last 5 minutes; the seed's alert thresholds in grey, each with its alert's state in Prometheus."
            >
              <LiveCharts series={live.series} stats={stats} />
            </Panel>
            {brokers === 3 ? kafkaPanel : null}
            <Panel
              id="scenarios"
              title="What can go wrong"
              subtitle="The seed's table of a dual write, then the at-least-once cases. The row that just happened is highlighted."
            >
              <ScenarioTable highlight={highlight} counts={stats?.scenarios.counts} />
            </Panel>
            <Panel
              id="feed"
              title="Live event feed"
              subtitle="Every delivery inventory-consumer saw. Click an order to follow its journey."
            >
              <EventFeed feed={live.feed} anomalies={live.anomalies} onOrder={showOrder} />
            </Panel>
            {brokers === 3 ? null : kafkaPanel}
          </div>
          <div className="col-side">
            <Panel
              id="failures"
              title="Break it on purpose"
              subtitle="Each button arms a real fault in the running services."
            >
              <FailurePanel
                states={state.data?.failurePoints}
                mode={stats?.settings.mode ?? state.data?.settings.mode}
                relay={(stats?.settings ?? state.data?.settings)?.relay.active}
                kafka={stats?.kafka}
                chaosEnabled={state.data?.chaosEnabled ?? stats?.chaosEnabled ?? true}
              />
            </Panel>
            <Panel
              id="processes"
              title="Processes"
              subtitle="Under a supervisor that restarts what dies."
            >
              <ProcessList processes={stats?.processes} />
            </Panel>
            <Panel
              id="consumer"
              title="Consumer group"
              subtitle="inventory-consumer's committed offsets against the end of each partition, read from Kafka."
            >
              <ConsumerGroupPanel group={stats?.consumerGroup} />
            </Panel>
            {stats?.cdc ? (
              <Panel
                id="cdc"
                title="Debezium CDC"
                subtitle="The replication slot Kafka Connect reads, from pg_replication_slots, and the connector task from Connect's REST API."
              >
                <CdcPanel cdc={stats.cdc} publishPerSecond={stats.rates.publishPerSecond} />
                <CdcComparison />
              </Panel>
            ) : null}
            <Panel id="journey" title="Order journey">
              <OrderJourney orderId={orderId} onOrder={setOrderId} />
            </Panel>
          </div>
        </div>
        <Panel
          id="outbox"
          title="Outbox browser"
          subtitle="The outbox table itself. A dead-lettered row waits for a human: fix the cause, then requeue it."
        >
          <OutboxBrowser onOrder={showOrder} />
        </Panel>
      </main>
      <footer className="foot">
        Outbox Lab · relay: FOR UPDATE SKIP LOCKED, acks = {acks ?? 'all'}
        {acks === '1' ? ' (UNSAFE)' : ''}, one UPDATE per batch · inbox: event_id PRIMARY KEY, ON
        CONFLICT DO NOTHING, in the same transaction as the effect.
      </footer>
    </>
  );
}
