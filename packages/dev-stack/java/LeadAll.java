import java.util.*;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;

/**
 * Makes one node the leader of every partition of a topic: each partition's replica
 * list is reordered with the node first (same replicas: no data moves), then a
 * preferred-leader election runs. kafkajs has no ElectLeaders, hence this file, run by
 * the JVM's single-file source launcher on the broker's own jars (dev-stack's
 * KafkaCluster.leadAll). Usage: LeadAll <bootstrap> <topic> <nodeId>
 */
public class LeadAll {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1];
    int node = Integer.parseInt(args[2]);
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    try (Admin admin = Admin.create(props)) {
      TopicDescription description =
          admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic);
      Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
      Set<TopicPartition> partitions = new HashSet<>();
      for (TopicPartitionInfo p : description.partitions()) {
        TopicPartition tp = new TopicPartition(topic, p.partition());
        partitions.add(tp);
        List<Integer> replicas = new ArrayList<>();
        p.replicas().forEach(r -> replicas.add(r.id()));
        if (!replicas.contains(node))
          throw new IllegalStateException("node " + node + " holds no replica of " + tp);
        if (replicas.get(0) == node) continue;
        replicas.remove(Integer.valueOf(node));
        replicas.add(0, node);
        moves.put(tp, Optional.of(new NewPartitionReassignment(replicas)));
      }
      if (!moves.isEmpty()) {
        admin.alterPartitionReassignments(moves).all().get(20, TimeUnit.SECONDS);
        long deadline = System.currentTimeMillis() + 20_000;
        while (!admin.listPartitionReassignments(partitions).reassignments().get().isEmpty()) {
          if (System.currentTimeMillis() > deadline)
            throw new IllegalStateException("the reassignment did not complete in 20 s");
          Thread.sleep(100);
        }
      }
      Map<TopicPartition, Optional<Throwable>> result =
          admin.electLeaders(ElectionType.PREFERRED, partitions).partitions().get(20, TimeUnit.SECONDS);
      for (Map.Entry<TopicPartition, Optional<Throwable>> e : result.entrySet()) {
        Optional<Throwable> error = e.getValue();
        if (error.isPresent() && !(error.get() instanceof ElectionNotNeededException))
          throw new IllegalStateException(e.getKey() + ": " + error.get());
      }
      System.out.println("node " + node + " leads every partition of " + topic);
    }
  }
}
