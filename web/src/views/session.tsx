export function SessionView({ sid }: { sid: string }) {
  return (
    <div class="view">
      <h1>{sid}</h1>
    </div>
  );
}
