"""The English words of a request in Portuguese, Spanish, German or Chinese, for the word index.

Tools describe themselves in English; a request in another language shares only its product names
with them, and the multilingual model, which places the request near its tool, blurs the action
("send" / "search" mail, "create" / "list" events). Most of what a request asks a tool for is said
with a few hundred everyday words: the actions of APIs and the things they act on. This table gives
their English for the four languages of hermes's users, so the word index can weigh them
(cross-language query expansion, a classic of retrieval): "manda um e-mail pro João" also searches
for "send email", "leg einen Ordner an" for "create folder", "新建文件夹" for "create folder".

Written by hand from general language use, verbs in the forms people type to an assistant
(imperative, infinitive, the Brazilian and the European Portuguese, du-form German). The first
part was written before any benchmark request was read; the second (from "buy" on) after reading
where the training translations failed (`tests/data/tool_training_intents_multilingual.jsonl`),
never the evaluation requests. Latin words are matched whole, ignoring accents and German ae/oe/ue
spellings, then by their Snowball stems (a form the table does not list: "apagou", "löschst"), and
a long one also inside a compound ("Kalendereintrag"); Chinese ones of two
characters or more, or of one that means nothing else (删, 搜; 行 is inside 银行), anywhere in the text,
since Chinese has no spaces. A word with two meanings in the four languages (Portuguese "fecha"
closes, Spanish "fecha" is a date) is left out. What the table does not know of a Chinese request
comes from CC-CEDICT where it is installed (`hermes.tools.chinese_words`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from hermes.tools import chinese_words
from hermes.tools.query_language import CJK, OTHER_WORDS, WORD

# english: foreign forms (Portuguese, Spanish, German, Chinese mixed; order does not matter; a word's
# forms may go on over several lines)
_TABLE = """
create: criar cria crie crea crear créame creame cree erstellen erstelle erstell anlegen lege leg 创建
create: 新建 建立 建一个 开一个
make: fazer faz faça faca hacer haz machen mach mache 制作 生成
add: adicionar adiciona adicione acrescenta añadir añade anade agregar agrega hinzufügen füge fuege
add: hinzu 添加 加上 加入 增加
delete: apagar apaga apague excluir exclui exclua deletar deleta borrar borra elimina eliminar 删
delete: löschen lösche lösch loesche entfernen entferne 删除 删掉 移除
remove: remover remova quitar quita entferne entfernen 去掉 移除
update: atualizar atualiza atualize actualizar actualiza aktualisieren aktualisiere 更新
edit: editar edita edite bearbeiten bearbeite ändern ändere aendere 编辑 修改 改一下 改成
rename: renomear renomeia renombrar renombra umbenennen benenne 重命名 改名
list: listar lista liste auflisten 列出 列一下 清单 列表
show: mostrar mostra mostre muestra muéstrame muestrame enseñar zeigen zeig zeige anzeigen 显示 看看 看一下 给我看 展示
get: obter pegar pega pegue obtener conseguir consigue holen hol hole abrufen 获取 拿到 取得
read: ler lê leia leer lesen lies 读取 阅读 读
search: buscar busca busque pesquisar pesquisa procurar procura suchen such suche durchsuchen 搜索 查找 检索 搜
find: encontrar encontra encuentra achar acha finden finde 找到 查到 找
check: verificar verifica checar checa comprobar comprueba prüfen prüfe pruefe überprüfen überprüfe 查
check: 检查 查看 查一下 确认
send: enviar envia envie envía envíale enviale mandar manda mande mándale mandale schicken schick
send: schicke senden sende verschicken 发送 发给 发一封 发个 发条
reply: responder responde antworten antworte beantworten 回复 回答
write: escrever escreve escreva escribir escribe schreiben schreib schreibe 编写 写
save: salvar salva salve guardar guarda speichern speichere speicher 保存
download: baixar baixa baixe descargar descarga herunterladen lade 下载
upload: subir sube hochladen 上传
export: exportar exporta exportieren exportiere 导出
import: importar importa importieren importiere 导入
run: rodar roda executar executa ejecutar ejecuta correr corre ausführen führe fuehre laufen starte 运行 执行 跑
start: iniciar inicia começar começa comecar empezar empieza starten starte beginnen 启动 开始
stop: parar pare detener detén deten stoppen stoppe anhalten beenden beende 停止 停掉 关掉
restart: reiniciar reinicia neustarten 重启 重新启动
cancel: cancelar cancela cancele abbrechen stornieren storniere absagen 取消
open: abrir abre abra öffnen öffne oeffne 打开
close: fechar feche cerrar cierra schließen schließe schliesse 关闭
move: mover mova mueve verschieben verschiebe 移动 移到
copy: copiar copia kopieren kopiere 复制 拷贝
merge: mesclar mescla fundir fusionar fusiona zusammenführen merge 合并
deploy: implantar implanta desplegar despliega deployen deploye bereitstellen 部署
publish: publicar publica veröffentlichen veröffentliche
schedule: agendar agenda marcar marca programar planen plane einplanen 安排 预约 排期
book: reservar reserva buchen buche 预订
convert: converter converte convertir convierte konvertieren konvertiere umwandeln wandle 转换 转成 转为
translate: traduzir traduz traducir traduce übersetzen übersetze uebersetze 翻译
summarize: resumir resume resuma zusammenfassen fasse 总结 概括 摘要
compare: comparar compara vergleichen vergleiche 比较 对比
count: contar zählen zähle zaehle 统计
install: instalar instala installieren installiere 安装
share: compartilhar compartilha compartir comparte teilen teile 分享 共享
invite: convidar convida invitar invita einladen 邀请
approve: aprovar aprova aprobar aprueba genehmigen genehmige 批准 审批
comment: comentar comenta comentário comentario kommentieren kommentar 评论 注释
archive: arquivar arquiva archivar archiva archivieren archiviere 归档
play: tocar toca reproducir reproduce abspielen spiele 播放
calculate: calcular calcula berechnen berechne rechne 计算
generate: gerar gera genera generar generieren generiere 生成
draw: desenhar desenha dibujar dibuja zeichnen zeichne
file: arquivo arquivos archivo archivos datei dateien 文件
folder: pasta pastas carpeta carpetas ordner verzeichnis 文件夹 目录
document: documento documentos dokument dokumente 文档
page: página pagina seite 页面 网页
email: e-mail email correo correos mail mails 邮件 邮箱 电邮
message: mensagem mensagens mensaje mensajes nachricht nachrichten 消息 信息 短信
meeting: reunião reuniao reunión reunion besprechung meeting 会议 开会
event: evento eventos termin termine veranstaltung 活动 事件
calendar: calendário calendario agenda kalender 日历
task: tarefa tarefas tarea tareas aufgabe aufgaben 任务 待办
issue: problema chamado incidencia 问题 工单
ticket: chamado ticket 工单
bug: bug erro fehler 缺陷 错误
branch: branch rama zweig 分支
repository: repositório repositorio 仓库
commit: commit 提交
user: usuário usuario usuarios benutzer nutzer 用户
account: conta cuenta konto 账户 账号
team: equipe equipo 团队
channel: canal kanal 频道
group: grupo gruppe 群组
contact: contato contacto kontakt 联系人
customer: cliente clientes kunde kunden 客户
order: pedido pedidos bestellung bestellungen 订单
invoice: fatura factura rechnung rechnungen 发票
payment: pagamento pago zahlung 支付 付款
price: preço preco precio preis 价格
product: produto producto produkt 产品 商品
stock: ação acao ações acciones aktie aktien 股票 股价
weather: clima wetter 天气
forecast: previsão previsao pronóstico pronostico vorhersage 预报
rain: chover chuva llover lluvia regen regnet 下雨
temperature: temperatura temperatur 温度 气温
city: cidade ciudad stadt 城市
address: endereço endereco dirección direccion adresse 地址
map: mapa karte 地图
route: rota ruta route 路线 导航
flight: voo vuelo flug 航班 机票
hotel: hotel 酒店
train: trem tren zug 火车 高铁
video: vídeo video 视频
image: imagem imagen bild bilder 图片 图像
photo: foto fotos 照片
song: música musica canción cancion lied 歌曲 音乐
playlist: playlist 歌单
note: nota notas notiz notizen 笔记
table: tabela tabla tabelle 表格
row: linha linhas fila filas zeile zeilen
column: coluna columna spalte
database: datenbank 数据库
log: log logs registro protokoll 日志
error: erro errores fehler 报错
server: servidor servidores 服务器
container: contêiner contenedor 容器
backup: backup sicherung 备份
password: senha contraseña contrasena passwort 密码
secret: segredo secreto geheimnis 密钥
key: chave clave schlüssel schluessel 密钥
link: link enlace 链接
website: site sitio webseite website 网站
news: notícias noticias nachrichten 新闻
report: relatório relatorio informe reporte bericht 报告 报表
chart: gráfico grafico diagramm 图表
spreadsheet: planilha hoja tabellenblatt 电子表格
sheet: aba planilha hoja blatt 工作表
cell: célula celula celda zelle 单元格
slide: slide diapositiva folie 幻灯片
presentation: apresentação apresentacao presentación presentacion präsentation 演示
text: texto text 文本 文字
transcript: transcrição transcripcion transcripción transkript 转录
recipe: receita receta rezept 菜谱 食谱
movie: filme película pelicula film 电影
book: livro libro buch
date: data fecha datum 日期
time: hora horário hora uhrzeit 时间
today: hoje hoy heute 今天
tomorrow: amanhã amanha mañana manana morgen 明天
yesterday: ontem ayer gestern 昨天
week: semana woche 星期
month: mês mes monat
year: ano año ano jahr
balance: saldo kontostand 余额
transaction: transação transacao transacción transaccion transaktion 交易
currency: moeda moneda währung waehrung 货币 汇率
code: código codigo code 代码
function: função funcao función funcion funktion 函数
test: teste testes prueba pruebas tests 测试
build: build compilação compilacion 构建 编译
pipeline: pipeline 流水线
release: versão versao lanzamiento release 版本 发版
package: pacote paquete paket
label: etiqueta etiquetas label 标签
status: estado zustand 状态
notification: notificação notificacao notificación notificacion benachrichtigung 通知
reminder: lembrete recordatorio erinnerung 提醒
phone: telefone teléfono telefono telefon 电话
location: localização localizacao ubicación ubicacion standort 位置
distance: distância distancia entfernung 距离
restaurant: restaurante restaurant 餐厅 饭店
mark: marcar marca marque markieren markiere markier 标记 标为 标成
complete: concluir conclui completar completa terminar termina feito feita hecho hecha erledigt erledige 完成 做完
reopen: reabrir reabre wiedereröffnen 重新打开
restore: restaurar restaura voltar volta regresar regresa wiederherstellen 恢复 还原 回滚
revert: reverter reverte revertir revierte zurücksetzen 撤销 撤回
merge: combinar combina kombinieren kombiniere
select: selecionar seleciona seleccionar selecciona auswählen wähle waehle 选择 选中
navigate: navegar navega geh gehe 访问 进入
remember: lembrar lembra lembre recordar recuerda merken merk merke 记住 记下
disable: desativar desativa desliga desligar desactivar desactiva deaktivieren deaktiviere ausschalten 禁用 停用
enable: ativar ativa liga ligar activar activa aktivieren aktiviere einschalten 启用 开启
query: consultar consulta abfragen 查询
view: visualizar ansehen 查看 看下
attach: anexar anexa adjuntar adjunta anhängen 附加 挂上
assign: atribuir atribui asignar asigna zuweisen 分配 指派
analyze: analisar analisa analizar analiza analysieren analysiere 分析
notify: notificar notifica avisar avisa benachrichtigen benachrichtige 通知
post: postar posta 发帖 发到
current: atual actual aktuell aktuelle 当前
history: histórico historico historial verlauf 历史
version: versão versao versión version versionen 版本
priority: prioridade prioridad priorität prioritaet 优先级
permission: permissão permissao permiso berechtigung 权限
policy: política politica richtlinie 策略
role: rol rolle 角色
domain: domínio dominio domäne 域名
dataset: datensatz 数据集
data: dados datos daten 数据
result: resultado resultados ergebnis ergebnisse 结果
battery: bateria batería akku batterie 电池
car: carro coche auto 汽车
medicine: remédio remedio medicamento medikament
chat: conversa conversación conversacion unterhaltung 会话 聊天
inbox: posteingang 收件箱
attachment: anexo adjunto anhang 附件
form: formulário formulario formular 表单
option: opção opcao opción opcion 选项 下拉
console: consola konsole 控制台
rule: regra regla regel 规则
usage: uso auslastung nutzung 使用率 用量
# Added after reading the training translations' failures (see above).
buy: comprar compra compre compro comprame kaufen kauf kaufe
sell: vender vende venda vendo verkaufen verkaufe
sort: ordenar ordena ordene sortieren sortiere sortier
filter: filtrar filtra filtre filtern filtere
replace: substituir substitui substitua reemplazar reemplaza sustituir sustituye ersetzen ersetze
reject: rejeitar rejeita rejeite recusar recusa recuse rechazar rechaza ablehnen lehne
decline: rejeitar rejeita recusar recusa rechazar rechaza ablehnen lehne
accept: aceitar aceita aceite aceptar acepta akzeptieren akzeptiere annehmen
connect: conectar conecta conecte verbinden verbinde
disconnect: desconectar desconecta desconecte trennen trenne
encrypt: criptografar criptografa criptografe encriptar encripta cifrar cifra verschlüsseln verschlüssele
decrypt: descriptografar descriptografa desencriptar desencripta descifrar descifra entschlüsseln entschlüssele
fix: corrigir corrige corrija consertar conserta arrumar arruma arrume arreglar arregla corregir
fix: reparieren repariere beheben behebe korrigieren korrigiere
format: formatar formata formate formatear formatea formatieren formatiere
track: acompanhar acompanha rastrear rastreia rastrea verfolgen verfolge
forget: esquecer esquece esqueça esqueca olvidar olvida vergessen vergiss
change: mudar muda mude alterar altera altere cambiar cambia cambie wechseln wechsle
set: definir define defina colocar coloca coloque ajustar ajusta ajuste establecer establece poner pon
set: setzen setze einstellen stelle
fetch: puxar puxa puxe traer trae
subscribe: assinar inscrever inscreve suscribir suscribe abonnieren abonniere
sign: assinar assina assine firmar firma unterschreiben unterschreibe signieren
login: logar loga entrar anmelden einloggen
register: cadastrar cadastra cadastre registrar registra registrieren registriere
validate: validar valida valide validieren validiere
scan: escanear escaneia escanea scannen scanne
monitor: monitorar monitora monitorear monitorea überwachen überwache
predict: prever preveja predecir predice vorhersagen
record: gravar grava grave grabar graba aufnehmen
print: imprimir imprime imprima drucken drucke
resize: redimensionar redimensiona skalieren skaliere
crop: recortar recorta recorte zuschneiden
rotate: girar gira rotacionar rotaciona rotar drehen drehe
compress: comprimir comprime compactar compacta komprimieren komprimiere
extract: extrair extrai extraia extraer extrae extrahieren extrahiere entpacken entpacke
split: dividir divide separar separa aufteilen
lock: bloquear bloqueia bloquea sperren sperre
unlock: desbloquear desbloqueia desbloquea entsperren entsperre
pause: pausar pausa pausieren pausiere
resume: retomar retoma reanudar reanuda fortsetzen
skip: pular pula saltar salta überspringen überspring
pay: pagar paga pague bezahlen bezahle zahlen zahle
refund: reembolsar reembolsa reembolso erstatten erstatte rückerstattung
return: devolver devolve devolução devolucao devolución devolucion devuelve rückgabe retoure
forward: encaminhar encaminha reenviar reenvía reenvia weiterleiten
follow: seguir segue siga sigue folgen folge
review: revisar revisa revise revisão revisao revisión revision begutachten
explain: explicar explica explique erklären erkläre
describe: descrever descreve describir describe beschreiben beschreibe
measure: medir mede mide messen
clone: clonar clona klonen klone
join: participar participa unirse beitreten
ask: perguntar pergunta preguntar pregunta fragen frage
answer: resposta respostas respuesta respuestas antwort
pin: fixar fixa fijar fija anheften
project: projeto projetos proyecto proyectos projekt projekte
board: quadro quadros tablero
card: cartão cartao cartões tarjeta tarjetas
topic: tópico topico tópicos tema temas thema themen
profile: perfil perfis perfiles profil
follower: seguidores seguidor follower
job: trabalho trabalhos trabajo trabajos auftrag
process: processo processos proceso procesos prozess prozesse
device: dispositivo dispositivos aparelho gerät geräte
app: aplicativo aplicativos aplicación aplicacion aplicaciones anwendung
library: biblioteca bibliotecas bibliothek
dependency: dependência dependencia dependências dependencias abhängigkeit abhängigkeiten
field: campo campos feld felder
entry: entrada entradas eintrag einträge
property: propriedade propriedades propiedad propiedades eigenschaft eigenschaften
resource: recurso recursos ressource ressourcen
instance: instância instancia instancias instanz instanzen
queue: warteschlange cola
alert: alerta alertas alarme alarma warnung
metric: métrica metrica métricas metricas metrik metriken
cost: custo custos costo costos coste kosten
budget: orçamento orcamento presupuesto
employee: funcionário funcionario funcionários funcionarios empleado empleados mitarbeiter
salary: salário salario nómina nomina gehalt lohn
vacation: férias ferias folga vacaciones urlaub
contract: contrato contratos vertrag verträge
candidate: candidato candidatos bewerber kandidat
patient: paciente pacientes patient
appointment: agendamento cita citas
doctor: médico medico médicos arzt ärzte
book: livro livros libro libros buch bücher
article: artigo artigos artículo articulo artículos artikel
word: palavra palavras palabra palabras wort wörter
language: idioma idiomas língua lingua sprache
screen: tela telas pantalla bildschirm
screenshot: bildschirmfoto
window: janela janelas ventana ventanas fenster
tab: aba abas pestaña pestana reiter
button: botão botao botón boton schaltfläche
element: elemento elementos
change: mudanças mudancas alterações alteracoes cambios änderungen
vulnerability: vulnerabilidade vulnerabilidades vulnerabilidad schwachstelle sicherheitslücke
security: segurança seguranca seguridad sicherheit
memory: memória memoria gedächtnis
summary: resumo resumen zusammenfassung
trend: tendência tendencia tendências tendencias
game: jogo jogos juego juegos spiel spiele
player: jogador jogadores jugador jugadores spieler
position: posição posicao posições posición posicion
trade: operação operacao operações operaciones handel
market: mercado mercados markt
cart: carrinho carrito warenkorb
delivery: entrega entregas lieferung versand
inventory: estoque inventário inventario lager bestand
room: quarto quartos habitación habitacion zimmer
reservation: reserva reservas reservierung buchung
guest: hóspede hospede huésped huesped gast
audio: áudio
voice: voz stimme
subtitle: legenda legendas subtítulo subtitulo subtítulos untertitel
color: cor cores farbe
size: tamanho tamaño tamano größe
bookmark: marcador marcadores lesezeichen
track: faixa faixas pista spur
effect: efeito efeitos efecto efectos effekt
selection: seleção selecao selección seleccion auswahl
component: componente componentes komponente
parameter: parâmetro parametro parâmetros parámetro
settings: configuração configuracao configurações configuracion configuración einstellung einstellungen
extension: extensão extensao extensión extension erweiterung
symbol: símbolo simbolo símbolos
reference: referência referencia referências referencias verweis
definition: definição definicao definición definicion
module: módulo modulo módulos modul
"""

# Names, paths and numbers, which are the same in every language: runs of ASCII not inside a word
# with other letters ("löschen" is no name "l").
_ASCII_RUN = re.compile(r"(?<![^\W\d_])[A-Za-z0-9][A-Za-z0-9_./:@-]*(?![^\W\d_])")
_COMPOUND_PART = 6  # a word this long is also found inside a compound word (German writes them)
_OTHER_PART = 5


def _plain(word: str) -> str:
    """Lower case, accents and German ae/oe/ue/ss spellings folded: "Lösche", "loesche" -> "losche"."""
    folded = unicodedata.normalize("NFKD", word.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return folded.replace("ae", "a").replace("oe", "o").replace("ue", "u").replace("ß", "ss")


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(Latin form -> English words, Chinese form -> English words)."""
    latin: dict[str, set[str]] = {}
    chinese: dict[str, set[str]] = {}
    for line in _TABLE.strip().splitlines():
        if line.startswith("#"):
            continue
        english, _, forms = line.partition(":")
        for form in forms.split():
            if CJK.search(form):
                chinese.setdefault(form, set()).add(english.strip())
            else:
                latin.setdefault(_plain(form), set()).add(english.strip())
    return latin, chinese


_STEM_SHORTEST = 4  # a shorter stem ("cri") stands for too many words


@lru_cache(maxsize=1)
def _stem_tables() -> list[tuple[Callable[[str], str], dict[str, set[str]]]]:
    """Per language (Portuguese, Spanish, German): its Snowball stemmer, and each form's stem -> English.

    The table lists the forms people type most; a stem also finds the others ("apagou", "apagando"
    beside "apaga"; "löschst" beside "lösche"). A request's language is not known, so a word is
    stemmed as each of the three and looked up in that language's stems of the whole table."""
    import snowballstemmer

    latin, _ = _tables()
    found = []
    for language in ("portuguese", "spanish", "german"):
        stem = snowballstemmer.stemmer(language).stemWord
        table: dict[str, set[str]] = {}
        for form, words in latin.items():
            stemmed = stem(form)
            if len(stemmed) >= _STEM_SHORTEST:
                table.setdefault(stemmed, set()).update(words)
        found.append((stem, table))
    return found


def english_words(text: str) -> list[str]:
    """The English of the everyday words of `text` that the table knows, in a stable order."""
    latin, chinese = _tables()
    found: dict[str, None] = {}
    for word in WORD.findall(text):
        plain = _plain(word)
        for english in sorted(latin.get(plain, ())):
            found[english] = None
        if plain not in latin and len(plain) >= _STEM_SHORTEST:
            for stem, table in _stem_tables():
                stemmed = stem(plain)
                if len(stemmed) >= _STEM_SHORTEST:
                    for english in sorted(table.get(stemmed, ())):
                        found[english] = None
        if len(plain) > _COMPOUND_PART and plain not in latin:
            for form, words in latin.items():
                # A compound holds another word beside this one ("kalender" + "eintrag"); a
                # longer form of a word ("restaurantes", "programación") does not.
                if len(form) >= _COMPOUND_PART and form in plain and len(plain) - len(form) >= _OTHER_PART:
                    for english in sorted(words):
                        found[english] = None
    if CJK.search(text):
        for form, words in chinese.items():
            if form in text:
                for english in sorted(words):
                    found[english] = None
        found.update(dict.fromkeys(chinese_words.english_of(text)))  # what the table does not know
    return list(found)


def gloss(text: str) -> str:
    """What an English reader can take from a request in another language: the English of its
    everyday words, then its names, paths and numbers ("把 pipeline 88 回滚到上一个版本" ->
    "pipeline release version restore 88"). The English model reads this far better
    than the request itself ('' when there is nothing to read)."""
    latin, _ = _tables()
    names = [token.rstrip(".:-/") for token in _ASCII_RUN.findall(text)
             if token.lower() not in OTHER_WORDS and _plain(token) not in latin]
    return " ".join([*english_words(text), *(name for name in names if name)])
