
(function () {
  var problems = [];
  var data = JSON.parse(document.getElementById('scores').textContent);
  var rows = document.querySelectorAll('#table3 tbody tr');
  var cells = 0;
  for (var i = 0; i < rows.length; i++) {
    var agent = data.agents[+rows[i].getAttribute('data-agent-index')];
    var group = agent.groups[+rows[i].getAttribute('data-group-index')];
    var tds = rows[i].querySelectorAll('td[data-metric]');
    for (var j = 0; j < tds.length; j++) {
      var m = tds[j].getAttribute('data-metric');
      var want = group.metrics[m].value;
      var got = tds[j].getAttribute('data-value');
      cells++;
      if (want === null ? got !== '' : Math.abs(parseFloat(got) - want) > 1e-9) {
        problems.push(agent.agent + '/' + group.name + '/' + m);
      }
      tds[j].title = m + ' over ' + group.metrics[m].n + ' instance(s)';
    }
  }
  document.body.setAttribute('data-check', problems.length ? 'mismatch: ' + problems.join(', ')
                                                            : 'ok ' + cells + ' cells');
})();
