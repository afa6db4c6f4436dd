// Concurrent senders of 10-message batches, through the AWS SDK for JavaScript v3 (the
// client the missing-RESULT-line report came from). It signs every call and checks the
// MD5s SQS returns. Usage:
//   node send_batches.mjs ENDPOINT QUEUE_URL SENDERS BATCHES PREFIX
// Prints the order ids it sent, as one JSON array; exits non-zero on any failed entry.
import { SQSClient, SendMessageBatchCommand } from "@aws-sdk/client-sqs";

const [endpoint, queueUrl, senders, batches, prefix] = process.argv.slice(2);
const client = new SQSClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "localcloud", secretAccessKey: "localcloud" },
});

async function sender(n) {
  const ids = [];
  for (let b = 0; b < Number(batches); b++) {
    const entries = [];
    for (let i = 0; i < 10; i++) {
      const id = `${prefix}-js${n}-${b}-${i}`;
      ids.push(id);
      entries.push({ Id: String(i), MessageBody: JSON.stringify({ id, quantity: 1 + (i % 10) }) });
    }
    const sent = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    if (sent.Failed && sent.Failed.length) throw new Error(`failed entries: ${JSON.stringify(sent.Failed)}`);
  }
  return ids;
}

const all = await Promise.all(Array.from({ length: Number(senders) }, (_, n) => sender(n)));
console.log(JSON.stringify(all.flat()));
