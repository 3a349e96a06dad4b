package lab.outbox.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.util.SimpleConfig;

/**
 * Replaces the header {@code header} (default "headers"), which holds a JSON object as
 * text, with one string header per key of that object. The Outbox Event Router places a
 * column in a single header; the polling relay sends each key of the outbox row's
 * {@code headers} jsonb (correlationId, traceparent, ...) as a header of its own, and the
 * consumer reads them that way. A record without the header passes unchanged; a header
 * that is not a JSON object of strings fails the record (a DataException), so a bad row
 * stops the connector instead of being published in another shape.
 */
public class ExpandJsonHeader<R extends ConnectRecord<R>> implements Transformation<R> {
  public static final String HEADER_CONFIG = "header";

  private static final ConfigDef CONFIG_DEF =
      new ConfigDef()
          .define(
              HEADER_CONFIG,
              ConfigDef.Type.STRING,
              "headers",
              ConfigDef.Importance.MEDIUM,
              "Name of the header that holds a JSON object to expand.");

  private static final ObjectMapper JSON = new ObjectMapper();
  private String header;

  @Override
  public void configure(Map<String, ?> props) {
    header = new SimpleConfig(CONFIG_DEF, props).getString(HEADER_CONFIG);
  }

  @Override
  public R apply(R record) {
    Header source = record.headers().lastWithName(header);
    if (source == null) return record;
    JsonNode object = parse(source.value());
    Headers headers = record.headers().duplicate();
    headers.remove(header);
    for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      if (!field.getValue().isTextual())
        throw new DataException("header \"" + field.getKey() + "\" is not a string");
      headers.addString(field.getKey(), field.getValue().textValue());
    }
    return record.newRecord(
        record.topic(),
        record.kafkaPartition(),
        record.keySchema(),
        record.key(),
        record.valueSchema(),
        record.value(),
        record.timestamp(),
        headers);
  }

  private JsonNode parse(Object value) {
    String text =
        value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    try {
      JsonNode node = JSON.readTree(text);
      if (node == null || !node.isObject())
        throw new DataException("header \"" + header + "\" is not a JSON object: " + text);
      return node;
    } catch (java.io.IOException e) {
      throw new DataException("header \"" + header + "\" is not JSON: " + text, e);
    }
  }

  @Override
  public ConfigDef config() {
    return CONFIG_DEF;
  }

  @Override
  public void close() {}
}
