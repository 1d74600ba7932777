export function KvView({ ns }: { ns?: string }) {
  return (
    <div class="view">
      <h1>KV {ns}</h1>
    </div>
  );
}
